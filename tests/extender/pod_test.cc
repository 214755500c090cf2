// File: tests/extender/pod_test.cc
// Effective Neuron request of a pod, per upstream's PodRequests (sidecars included).
#include "lib/extender/pod.h"

#include "catch2/catch.hpp"
#include "nlohmann/json.hpp"

namespace neuron::extender {
namespace {

using nlohmann::json;

json C(const char* resource, const json& n, const char* restart = nullptr,
       bool limit_only = false) {
  json c = {{"name", "c"}};
  c["resources"][limit_only ? "limits" : "requests"][resource] = n;
  if (restart) c["restartPolicy"] = restart;
  return c;
}

constexpr char kDev[] = "aws.amazon.com/neuron";
constexpr char kCore[] = "aws.amazon.com/neuroncore";

TEST_CASE("containers are summed, limits imply requests", "[extender][pod]") {
  json spec = {{"containers", {C(kDev, "2"), C(kDev, 1, nullptr, true), C(kCore, "3")}}};
  auto r = EffectiveRequest(spec);
  REQUIRE(r.ok());
  CHECK(r->devices == 3);
  CHECK(r->cores == 3);
}

TEST_CASE("init containers take the max; sidecars are summed", "[extender][pod]") {
  // Plain init containers: max(init) vs sum(containers).
  json spec = {{"initContainers", {C(kCore, "8"), C(kCore, "2")}}, {"containers", {C(kCore, "4")}}};
  CHECK(EffectiveRequest(spec)->cores == 8);
  // Sidecar 2 then init 7: during init 2+7 = 9; running 4 + 2 = 6 -> 9.
  spec = {{"initContainers", {C(kCore, "2", "Always"), C(kCore, "7")}},
          {"containers", {C(kCore, "4")}}};
  CHECK(EffectiveRequest(spec)->cores == 9);
  // Init 7 before the sidecar does not overlap it: max(7, 4 + 2) = 7.
  spec = {{"initContainers", {C(kCore, "7"), C(kCore, "2", "Always")}},
          {"containers", {C(kCore, "4")}}};
  CHECK(EffectiveRequest(spec)->cores == 7);
  // Two sidecars: running total 1 + 1 + 1.
  spec = {{"initContainers", {C(kDev, "1", "Always"), C(kDev, "1", "Always")}},
          {"containers", {C(kDev, "1")}}};
  CHECK(EffectiveRequest(spec)->devices == 3);
}

TEST_CASE("pods without Neuron resources pass untouched", "[extender][pod]") {
  json pod = {
      {"metadata", {{"name", "web"}, {"namespace", "a"}}},
      {"spec", {{"containers", {{{"name", "c"}, {"resources", {{"requests", {{"cpu", "1"}}}}}}}}}}};
  auto p = ParsePod(pod);
  REQUIRE(p.ok());
  CHECK_FALSE(p->request.Any());
  CHECK(p->Key() == "a/web");
}

TEST_CASE("bad quantities are refused", "[extender][pod]") {
  for (json q : {json("-1"), json(-1), json("1.5"), json("2k"), json(1.0), json(true), json("4097"),
                 json(""), json("1e3")}) {
    CAPTURE(q.dump());
    CHECK_FALSE(ParseCount(q, "x").ok());
  }
  CHECK(*ParseCount(json("16"), "x") == 16);
  CHECK(*ParseCount(json(0), "x") == 0);
  json spec = {{"containers", {C(kDev, 4096), C(kDev, 1)}}};
  CHECK_FALSE(EffectiveRequest(spec).ok());
}

TEST_CASE("a pod pruned to PodFields parses as the whole pod does", "[extender][pod]") {
  json pod = {{"metadata",
               {{"name", "p"},
                {"namespace", "ml"},
                {"uid", "u"},
                {"managedFields", json::array()},
                {"annotations",
                 {{"AWS_NEURON_IDS", "0,1"},
                  {"NEURON_RESOURCE_TYPE", "neuron"},
                  {"other", std::string(1000, 'x')}}}}},
              {"spec", {{"nodeName", "n1"}, {"containers", {C(kDev, "2")}}}},
              {"status", {{"phase", "Running"}, {"conditions", json::array()}}}};
  auto before = ParsePod(pod);
  absl::StatusOr<json> pruned = ParsePruned(pod.dump(), PodFields());
  REQUIRE(pruned.ok());
  auto after = ParsePod(*pruned);
  REQUIRE(after.ok());
  CHECK(after->request == before->request);
  REQUIRE(after->assignment.has_value());
  CHECK(after->assignment->ids == std::vector<int>{0, 1});
  CHECK(after->assignment->kind == assignment::ResourceKind::kDevice);
  CHECK(after->node_name == "n1");
  CHECK(after->phase == "Running");
  CHECK_FALSE((*pruned)["metadata"]["annotations"].contains("other"));
  CHECK_FALSE((*pruned)["metadata"].contains("managedFields"));
  CHECK_FALSE((*pruned)["status"].contains("conditions"));
}

}  // namespace
}  // namespace neuron::extender
