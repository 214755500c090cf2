// File: tests/base/json_prune_test.cc
#include "lib/base/json_prune.h"

#include <catch2/catch.hpp>

namespace neuron {
namespace {

using nlohmann::json;

const char kPodText[] = R"({"apiVersion":"v1","kind":"Pod",
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
  auto j = ParsePruned(kPodText, keep);
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
  auto whole = ParsePruned(kPodText, JsonKeep{});
  REQUIRE(whole.ok());
  CHECK(*whole == json::parse(kPodText));
}

TEST_CASE("AllBut keeps everything except what it drops", "[json_prune]") {
  using Member = JsonKeep::Member;
  const JsonKeep keep = JsonKeep::AllBut(
      {{"metadata", JsonKeep::AllBut({Member::Drop("labels"),
                                      {"annotations", JsonKeep::AllBut({Member::Drop("drop")})}})},
       Member::Drop("status")});
  auto j = ParsePruned(kPodText, keep);
  REQUIRE(j.ok());
  json want = json::parse(kPodText);
  want.erase("status");
  want["metadata"].erase("labels");
  want["metadata"]["annotations"].erase("drop");
  CHECK(*j == want);
  // An AllBut that drops nothing keeps the object whole.
  auto whole = ParsePruned(kPodText, JsonKeep::AllBut({}));
  REQUIRE(whole.ok());
  CHECK(*whole == json::parse(kPodText));
}

TEST_CASE("pruned parse: what is read is validated, the structure always", "[json_prune]") {
  const JsonKeep keep = JsonKeep::Of({{"a", {}}});
  // Kept values, the document's structure and its UTF-8 are checked; a scalar passed over is
  // not read (simdjson On-Demand), so `{"b":tru}` around a kept "a" is not an error.
  for (const char* bad :
       {R"({"a":[1,}})", R"({"a":tru})", R"({"a":1} x)", R"({"a":"\x"})", R"({"a":04})", "", "{",
        R"({"a":1,"b":"unterminated})", "{\"a\":1,\"b\":\"\xff\"}", R"({"a":1 "b":2})", "[1]]"}) {
    CAPTURE(bad);
    auto j = ParsePruned(bad, keep);
    REQUIRE_FALSE(j.ok());
    CHECK(j.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(j.status().message()), Catch::Contains("invalid JSON"));
  }
  // Repeated keys: the last wins, as in a full tree.
  auto j = ParsePruned(R"({"a":1,"a":2})", keep);
  REQUIRE(j.ok());
  CHECK((*j)["a"] == 2);
}

TEST_CASE("pruned parse: numbers and strings as nlohmann reads them", "[json_prune]") {
  auto j = ParsePruned(
      R"({"i":-5,"u":18446744073709551615,"big":99999999999999999999,"f":1.5e3,"s":"\u00e9\n","t":true,"n":null})",
      JsonKeep{});
  REQUIRE(j.ok());
  CHECK((*j)["i"] == -5);
  CHECK((*j)["u"] == 18446744073709551615ULL);
  CHECK((*j)["big"].is_number_float());
  CHECK((*j)["f"] == 1500.0);
  CHECK((*j)["s"] == "\u00e9\n");
  CHECK((*j)["t"] == true);
  CHECK((*j)["n"].is_null());
  // Many digits: simdjson 3.0.1 alone reads this as 1.8e-149.
  auto many = ParsePruned("0." + std::string(170, '9'), JsonKeep{});
  REQUIRE(many.ok());
  CHECK(*many == 1.0);
  // A scalar document and an array of kept items.
  CHECK(*ParsePruned("7", JsonKeep{}) == 7);
  auto items = ParsePruned(R"([{"a":1,"b":2},{"b":3}])", JsonKeep::EachItem(JsonKeep::Of({{"a"}})));
  REQUIRE(items.ok());
  CHECK(*items == json::parse(R"([{"a":1},{}])"));
}

TEST_CASE("pruned parse: hostile nesting is an error where read, free where passed over",
          "[json_prune]") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto whole = ParsePruned(R"({"a":)" + deep + "}", JsonKeep::Of({{"a"}}));
  REQUIRE_FALSE(whole.ok());
  CHECK_THAT(std::string(whole.status().message()), Catch::Contains("nested deeper than 128"));
  auto skipped = ParsePruned(R"({"b":)" + deep + R"(,"a":1})", JsonKeep::Of({{"a"}}));
  REQUIRE(skipped.ok());
  CHECK(*skipped == json::parse(R"({"a":1})"));
  auto limited = ParsePruned(R"({"a":[[[1]]]})", JsonKeep{}, 3);
  REQUIRE_FALSE(limited.ok());
  CHECK(ParsePruned(R"({"a":[[1]]})", JsonKeep{}, 3).ok());
}

}  // namespace
}  // namespace neuron
