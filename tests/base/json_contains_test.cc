// JsonContains: when a live object already holds what an apply would set.
#include "lib/base/json_contains.h"

#include <catch2/catch.hpp>

#include "nlohmann/json.hpp"

namespace neuron {
namespace {

using nlohmann::json;

TEST_CASE("a live object with server additions contains what was applied", "[json]") {
  const json desired = {
      {"metadata", {{"name", "ds"}, {"labels", {{"a", "1"}}}}},
      {"spec",
       {{"containers", {{{"name", "c"}, {"args", {"--x"}}}}}, {"tolerations", json::array()}}}};
  json live = desired;
  live["metadata"]["uid"] = "u";
  live["metadata"]["labels"]["added"] = "by-someone";
  live["spec"]["containers"][0]["terminationMessagePath"] = "/dev/termination-log";
  live["spec"].erase("tolerations");  // the API drops empty lists
  live["status"] = {{"numberReady", 3}};
  CHECK(JsonContains(live, desired));
}

TEST_CASE("any difference in what was applied is not contained", "[json]") {
  const json desired = {{"spec", {{"args", {"--x", "--y"}}, {"replicas", 2}, {"image", "a:1"}}}};
  json changed = desired;
  changed["spec"]["image"] = "a:2";
  CHECK_FALSE(JsonContains(changed, desired));
  json reordered = desired;
  reordered["spec"]["args"] = {"--y", "--x"};
  CHECK_FALSE(JsonContains(reordered, desired));
  json longer = desired;
  longer["spec"]["args"].push_back("--z");
  CHECK_FALSE(JsonContains(longer, desired));
  json missing = desired;
  missing["spec"].erase("replicas");
  CHECK_FALSE(JsonContains(missing, desired));
  json retyped = desired;
  retyped["spec"]["replicas"] = "2";
  CHECK_FALSE(JsonContains(retyped, desired));
  CHECK(JsonContains(
      json{{"spec", {{"args", {"--x", "--y"}}, {"replicas", 2.0}, {"image", "a:1"}}}}, desired));
  CHECK_FALSE(JsonContains(json(nullptr), desired));
  CHECK_FALSE(JsonContains(json::array(), desired));
}

}  // namespace
}  // namespace neuron
