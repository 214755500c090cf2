// File: tests/assignment/annotations_test.cc
#include "lib/assignment/annotations.h"

#include "catch2/catch.hpp"

namespace neuron::assignment {
namespace {

TEST_CASE("an extender's choice is written as four keys and read back", "[assignment]") {
  const Assignment chosen{ResourceKind::kCore, {8, 9, 10, 11}, false, 1700000000123456789};
  const Annotations written = Format(chosen);
  CHECK(written == Annotations{{"AWS_NEURON_IDS", "8,9,10,11"},
                               {"NEURON_RESOURCE_TYPE", "neuroncore"},
                               {"NEURON_ALLOCATED", "false"},
                               {"NEURON_ALLOC_TIME", "1700000000123456789"}});
  absl::StatusOr<Assignment> read = Parse(written);
  REQUIRE(read.ok());
  CHECK(*read == chosen);
}

TEST_CASE("a device plugin's allocation carries no choice time", "[assignment]") {
  const Annotations written = Format({ResourceKind::kDevice, {3}, true, std::nullopt});
  CHECK(written.count("NEURON_ALLOC_TIME") == 0);
  CHECK(written.at("NEURON_ALLOCATED") == "true");
  CHECK(written.at("NEURON_RESOURCE_TYPE") == "neuron");
}

TEST_CASE("reading tolerates what others write and refuses what is malformed", "[assignment]") {
  Annotations a = {{"AWS_NEURON_IDS", "0-3"}, {"NEURON_RESOURCE_TYPE", "aws.amazon.com/neuron"}};
  absl::StatusOr<Assignment> read = Parse(a);
  REQUIRE(read.ok());
  CHECK(read->ids == std::vector<int>{0, 1, 2, 3});
  CHECK(read->kind == ResourceKind::kDevice);
  CHECK_FALSE(read->allocated);
  CHECK_FALSE(read->chosen_at_ns.has_value());

  a["NEURON_ALLOC_TIME"] = "soon";  // only orders choices: ignored when unreadable
  CHECK(Parse(a).ok());
  CHECK(Parse({{"NEURON_RESOURCE_TYPE", "neuron"}}).status().code() == absl::StatusCode::kNotFound);
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"AWS_NEURON_IDS", "1,1"},
                                                        {"AWS_NEURON_IDS", ""},
                                                        {"NEURON_RESOURCE_TYPE", "gpu"},
                                                        {"NEURON_ALLOCATED", "yes"}}) {
    Annotations bad = a;
    bad[key] = value;
    CAPTURE(key, value);
    absl::StatusOr<Assignment> r = Parse(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(r.status().message().find(key) != absl::string_view::npos);
  }
}

}  // namespace
}  // namespace neuron::assignment
