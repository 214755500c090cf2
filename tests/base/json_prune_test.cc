// File: tests/base/json_prune_test.cc
#include "lib/base/json_prune.h"

#include <catch2/catch.hpp>

namespace neuron {
namespace {

using nlohmann::json;

const char kPod[] = R"({"apiVersion":"v1","kind":"Pod",
  "metadata":{"name":"p","namespace":"ml","labels":{"a":"b"},"managedFields":[{"x":1}],
              "annotations":{"keep":"1","drop":"2"}},
  "spec":{"nodeName":"n1","containers":[{"name":"c","image":"i","resources":{"limits":{"x":"4"}}},
                                        {"name":"d","resources":{}}]},
  "status":{"phase":"Running","conditions":[{"type":"Ready"}]}})";

TEST_CASE("pruned parse keeps exactly what is described", "[json_prune]") {
  const JsonKeep keep = JsonKeep::Of({
      {"metadata", JsonKeep::Of({{"name", {}}, {"annotations", JsonKeep::Of({{"keep", {}}})}})},
      {"spec",
       JsonKeep::Of({{"nodeName", {}},
                     {"containers", JsonKeep::EachItem(JsonKeep::Of({{"resources", {}}}))}})},
      {"status", JsonKeep::Of({{"phase", {}}})},
  });
  auto j = ParsePruned(kPod, keep);
  REQUIRE(j.ok());
  CHECK(*j == json::parse(R"({"metadata":{"name":"p","annotations":{"keep":"1"}},
    "spec":{"nodeName":"n1","containers":[{"resources":{"limits":{"x":"4"}}},{"resources":{}}]},
    "status":{"phase":"Running"}})"));
}

TEST_CASE("pruned parse: prefixes, whole values, mismatched types", "[json_prune]") {
  const JsonKeep labels = JsonKeep::Of({JsonKeep::Member::Prefix("feature.node/")});
  const JsonKeep keep = JsonKeep::Of({{"labels", labels}, {"spec", JsonKeep::Of({{"x", {}}})}});
  auto j = ParsePruned(
      R"({"labels":{"feature.node/a":"1","other":"2","feature.node/b":{"deep":[1]}},"spec":"oops"})",
      keep);
  REQUIRE(j.ok());
  // "spec" is described as an object but is a string: kept as is, so a reader sees the error.
  CHECK(*j == json::parse(R"({"labels":{"feature.node/a":"1","feature.node/b":{"deep":[1]}},
                              "spec":"oops"})"));
  auto whole = ParsePruned(kPod, JsonKeep{});
  REQUIRE(whole.ok());
  CHECK(*whole == json::parse(kPod));
}

TEST_CASE("AllBut keeps everything except what it drops", "[json_prune]") {
  using Member = JsonKeep::Member;
  const JsonKeep keep = JsonKeep::AllBut(
      {{"metadata", JsonKeep::AllBut({Member::Drop("labels"),
                                      {"annotations", JsonKeep::AllBut({Member::Drop("drop")})}})},
       Member::Drop("status")});
  auto j = ParsePruned(kPod, keep);
  REQUIRE(j.ok());
  json want = json::parse(kPod);
  want.erase("status");
  want["metadata"].erase("labels");
  want["metadata"]["annotations"].erase("drop");
  CHECK(*j == want);
  // An AllBut that drops nothing keeps the object whole.
  auto whole = ParsePruned(kPod, JsonKeep::AllBut({}));
  REQUIRE(whole.ok());
  CHECK(*whole == json::parse(kPod));
}

TEST_CASE("pruned parse validates what it passes over", "[json_prune]") {
  const JsonKeep keep = JsonKeep::Of({{"a", {}}});
  for (const char* bad : {R"({"a":1,"b":[1,}})", R"({"a":1,"b":tru})", R"({"a":1} x)",
                          R"({"a":1,"b":"\x"})", "", "{"}) {
    CAPTURE(bad);
    auto j = ParsePruned(bad, keep);
    REQUIRE_FALSE(j.ok());
    CHECK(j.status().code() == absl::StatusCode::kInvalidArgument);
  }
  // Repeated keys: the last wins, as in a full tree.
  auto j = ParsePruned(R"({"a":1,"a":2})", keep);
  REQUIRE(j.ok());
  CHECK((*j)["a"] == 2);
}

}  // namespace
}  // namespace neuron
