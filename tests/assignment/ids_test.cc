// File: tests/assignment/ids_test.cc
#include "lib/assignment/ids.h"

#include "catch2/catch.hpp"

namespace neuron::assignment {
namespace {

TEST_CASE("ParseIdList accepts lists and ranges in order", "[ids]") {
  auto ids = ParseIdList("0,1,2");
  REQUIRE(ids.ok());
  CHECK(*ids == std::vector<int>{0, 1, 2});
  ids = ParseIdList(" 4-6 , 1 ");
  REQUIRE(ids.ok());
  CHECK(*ids == std::vector<int>{4, 5, 6, 1});
  ids = ParseIdList("127");
  REQUIRE(ids.ok());
  CHECK(*ids == std::vector<int>{127});
}

TEST_CASE("ParseIdList rejects malformed lists", "[ids]") {
  for (const char* bad : {"", " ", "1,,2", "1,", "-1", "a", "1-", "3-1", "1,1", "0-3,2", "01", "+1",
                          "1.0", "99999", "0-99999", "1 2"}) {
    INFO(bad);
    CHECK_FALSE(ParseIdList(bad).ok());
  }
}

TEST_CASE("FormatRanges collapses runs and sorts", "[ids]") {
  CHECK(FormatRanges({3, 0, 1, 2, 6}) == "0-3,6");
  CHECK(FormatRanges({5}) == "5");
  CHECK(FormatRanges({1, 3}) == "1,3");
  CHECK(FormatRanges({}).empty());
  CHECK(FormatIdList({2, 1}) == "2,1");
}

TEST_CASE("Resource names and lists", "[ids]") {
  CHECK(ResourceName(ResourceKind::kDevice) == "aws.amazon.com/neuron");
  CHECK(ResourceName(ResourceKind::kCore) == "aws.amazon.com/neuroncore");
  CHECK(ParseResourceKind("aws.amazon.com/neuroncore") == ResourceKind::kCore);
  CHECK_FALSE(ParseResourceKind("neurondevice").has_value());
  auto list = ParseResourceList("neuron,neuroncore,neuron");
  REQUIRE(list.ok());
  CHECK(*list == std::vector<ResourceKind>{ResourceKind::kDevice, ResourceKind::kCore});
  CHECK_FALSE(ParseResourceList("neuron,gpu").ok());
  CHECK_FALSE(ParseResourceList("").ok());
}

}  // namespace
}  // namespace neuron::assignment
