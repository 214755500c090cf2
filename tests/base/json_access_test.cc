// File: tests/base/json_access_test.cc
#include "lib/base/json_access.h"

#include <catch2/catch.hpp>
#include <limits>

namespace neuron {
namespace {

using nlohmann::json;

const json kPod = json::parse(R"({
  "metadata": {"name": "p", "namespace": null, "labels": {"a": "b"}, "generation": 3},
  "spec": {"containers": [{"name": "c"}], "paused": true, "replicas": "2"},
  "status": [1, 2]
})");

TEST_CASE("Member finds present, non-null members of objects only", "[json_access]") {
  REQUIRE(Member(kPod, "metadata") != nullptr);
  CHECK(Member(kPod, "metadata") == &kPod.at("metadata"));
  CHECK(Member(kPod, "missing") == nullptr);
  CHECK(Member(kPod.at("metadata"), "namespace") == nullptr);  // JSON null reads as absent
  CHECK(Member(kPod.at("status"), "0") == nullptr);            // an array is not an object
  CHECK(Member(json("text"), "x") == nullptr);
  CHECK(Member(json(), "x") == nullptr);
  CHECK(Member(json(7), "x") == nullptr);
}

TEST_CASE("MemberFold matches keys as Go's encoding/json does", "[json_access]") {
  const json args = json::parse(R"({"pod": {"n": 1}, "Pod": {"n": 2}, "NODENAMES": ["a"],
                                    "Nodes": null})");
  REQUIRE(MemberFold(args, "Pod") != nullptr);
  CHECK(MemberFold(args, "Pod")->at("n") == 2);  // the exact key wins
  REQUIRE(MemberFold(args, "NodeNames") != nullptr);
  CHECK(MemberFold(args, "NodeNames")->at(0) == "a");
  CHECK(MemberFold(args, "nodes") == nullptr);  // null reads as absent
  CHECK(MemberFold(args, "Other") == nullptr);
  CHECK(MemberFold(json::array(), "Pod") == nullptr);
}

TEST_CASE("MemberAt walks object keys and JSON pointers without throwing", "[json_access]") {
  REQUIRE(MemberAt(kPod, {"metadata", "labels", "a"}) != nullptr);
  CHECK(*MemberAt(kPod, {"metadata", "labels", "a"}) == "b");
  CHECK(MemberAt(kPod, {}) == &kPod);
  CHECK(MemberAt(kPod, {"metadata", "missing", "a"}) == nullptr);
  CHECK(MemberAt(kPod, {"metadata", "name", "x"}) == nullptr);  // through a string
  CHECK(MemberAt(kPod, {"status", "0"}) == nullptr);            // keys do not index arrays
  CHECK(MemberAt(kPod, {"metadata", "namespace"}) == nullptr);

  CHECK(*MemberAt(kPod, "/spec/containers/0/name"_json_pointer) == "c");
  CHECK(*MemberAt(kPod, "/status/1"_json_pointer) == 2);
  CHECK(MemberAt(kPod, "/status/2"_json_pointer) == nullptr);
  CHECK(MemberAt(kPod, "/status/-"_json_pointer) == nullptr);
  CHECK(MemberAt(kPod, "/status/x"_json_pointer) == nullptr);
  CHECK(MemberAt(kPod, "/status/99999999999999999999999999"_json_pointer) == nullptr);
  CHECK(MemberAt(kPod, "/metadata/name/x"_json_pointer) == nullptr);
  CHECK(MemberAt(kPod, "/metadata/namespace"_json_pointer) == nullptr);
  CHECK(MemberAt(json(), "/a"_json_pointer) == nullptr);
}

TEST_CASE("MemberOrNull yields a usable null for anything absent", "[json_access]") {
  CHECK(MemberOrNull(kPod, "metadata").is_object());
  CHECK(MemberOrNull(kPod, "missing").is_null());
  CHECK(MemberOrNull(json(3), "x").is_null());
  CHECK(MemberOrNull(kPod, {"spec", "containers"}).size() == 1);
  CHECK(MemberOrNull(kPod, {"spec", "nope", "containers"}).is_null());
  int n = 0;
  for (const json& c : MemberOrNull(kPod, {"spec", "initContainers"})) n += c.is_object();
  CHECK(n == 0);
  // The null it returns is shared and stays null.
  CHECK(&MemberOrNull(kPod, "a") == &MemberOrNull(json(), "b"));
}

TEST_CASE("typed getters return the value of that type or the default", "[json_access]") {
  CHECK(StringOf(json("x")) == "x");
  CHECK(StringOf(json(1)) == "");
  CHECK(StringOf(json(1), "d") == "d");
  CHECK(StringOf(static_cast<const json*>(nullptr), "d") == "d");
  CHECK(StringMember(kPod.at("metadata"), "name") == "p");
  CHECK(StringMember(kPod.at("metadata"), "generation", "none") == "none");
  CHECK(StringMember(json("str"), "name", "none") == "none");
  CHECK(StringAt(kPod, {"metadata", "labels", "a"}) == "b");
  CHECK(StringAt(kPod, {"metadata", "labels", "b"}, "z") == "z");

  CHECK(IntOf(json(-4)) == -4);
  CHECK(IntOf(json(4u)) == 4);
  CHECK(IntOf(json(std::numeric_limits<uint64_t>::max()), -1) == -1);  // does not fit
  CHECK(IntOf(json(2.5), 9) == 9);
  CHECK(IntOf(json("2"), 9) == 9);
  CHECK(IntOf(Member(kPod, "missing"), 5) == 5);
  CHECK(IntAt(kPod, "/metadata/generation"_json_pointer) == 3);
  CHECK(IntAt(kPod, "/spec/replicas"_json_pointer, 1) == 1);  // a string is not an integer
  CHECK(IntAt(kPod, "/spec/none"_json_pointer, 1) == 1);

  CHECK(BoolOf(json(true)) == true);
  CHECK(BoolOf(json("true")) == false);
  CHECK(BoolOf(json(1), true) == true);
  CHECK(BoolOf(MemberAt(kPod, {"spec", "paused"})) == true);
  CHECK(BoolOf(MemberAt(kPod, {"spec", "missing"}), true) == true);
}

}  // namespace
}  // namespace neuron
