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

namespace neuron::extender {
namespace {

json GroupMeta(const json& labels, const json& annotations = json::object()) {
  return {{"metadata",
           {{"name", "p"}, {"namespace", "ml"}, {"labels", labels}, {"annotations", annotations}}},
          {"spec", {{"containers", {C(kDev, "16")}}}}};
}

std::optional<PodGroup> GroupOf(const json& pod) {
  auto p = ParsePod(pod);
  REQUIRE(p.ok());
  // What the list feed and the filter read (pruned) says the same.
  absl::StatusOr<json> pruned = ParsePruned(pod.dump(), PodFields());
  REQUIRE(pruned.ok());
  auto cut = ParsePod(*pruned);
  REQUIRE(cut.ok());
  CHECK(cut->group == p->group);
  return p->group;
}

TEST_CASE("pod groups from neuron.aws.com labels and annotations", "[extender][pod]") {
  auto g = GroupOf(GroupMeta({{kPodGroupLabel, "job"}, {kUltraServerNodesKey, "4"}}));
  REQUIRE(g);
  CHECK(*g == PodGroup{"ml/job", 4, ""});
  g = GroupOf(GroupMeta({{kPodGroupLabel, "job"}}, {{kUltraServerNodesKey, "2"}}));
  REQUIRE(g);
  CHECK(g->set_size == 2);
  CHECK_FALSE(GroupOf(GroupMeta({{"app", "x"}})));
  g = GroupOf(GroupMeta({{kPodGroupLabel, "job"}}));
  REQUIRE(g);
  CHECK(g->error.find("has no neuron.aws.com/ultraserver-nodes") != std::string::npos);
  for (const char* bad : {"3", "8", "", "four", "04"}) {
    CAPTURE(bad);
    g = GroupOf(GroupMeta({{kPodGroupLabel, "job"}, {kUltraServerNodesKey, bad}}));
    REQUIRE(g);
    CHECK(g->error.find("is not an UltraServer set size") != std::string::npos);
  }
  g = GroupOf(GroupMeta(json::object(), {{kUltraServerNodesKey, "2"}}));
  REQUIRE(g);
  CHECK(g->error.find("names no group") != std::string::npos);
}

TEST_CASE("LeaderWorkerSet pods form groups through AWS's exclusive topology", "[extender][pod]") {
  const json lws_labels = {{kLwsGroupKeyLabel, "689ce1b5"}};
  auto ann = [](const std::string& size, const std::string& topo) {
    return json{{kLwsSizeAnnotation, size}, {kLwsExclusiveAnnotation, topo}};
  };
  auto g = GroupOf(GroupMeta(lws_labels, ann("4", "neuron.amazonaws.com/ultraserver-server-id-4")));
  REQUIRE(g);
  CHECK(*g == PodGroup{"ml/lws:689ce1b5", 4, ""});
  g = GroupOf(GroupMeta(lws_labels, ann("2", "neuron.amazonaws.com/ultraserver-server-id-2")));
  REQUIRE(g);
  CHECK(g->set_size == 2);
  g = GroupOf(GroupMeta(lws_labels, ann("8", "neuron.amazonaws.com/ultraserver-server-id-4")));
  REQUIRE(g);
  CHECK(g->error.find("must equal the UltraServer set size 4") != std::string::npos);
  g = GroupOf(GroupMeta(lws_labels, ann("4", "neuron.amazonaws.com/ultraserver-server-id-3")));
  REQUIRE(g);
  CHECK(g->error.find("names no UltraServer set size") != std::string::npos);
  // Another topology: no UltraServer group, unless ultraserver-nodes asks for one.
  CHECK_FALSE(GroupOf(GroupMeta(lws_labels, ann("4", "kubernetes.io/hostname"))));
  json with_nodes = ann("2", "kubernetes.io/hostname");
  with_nodes[kUltraServerNodesKey] = "2";
  g = GroupOf(GroupMeta(lws_labels, with_nodes));
  REQUIRE(g);
  CHECK(*g == PodGroup{"ml/lws:689ce1b5", 2, ""});
  with_nodes[kLwsExclusiveAnnotation] = "neuron.amazonaws.com/ultraserver-server-id-4";
  g = GroupOf(GroupMeta(lws_labels, with_nodes));
  REQUIRE(g);
  CHECK(g->error.find("disagrees") != std::string::npos);
  // Wrong types never throw.
  CHECK_FALSE(GroupOf(GroupMeta(json::array({1, 2}), json("x"))));
  g = GroupOf(
      GroupMeta({{kPodGroupLabel, 7}, {kLwsGroupKeyLabel, "k"}},
                {{kLwsSizeAnnotation, 4},
                 {kLwsExclusiveAnnotation, "neuron.amazonaws.com/ultraserver-server-id-4"}}));
  REQUIRE(g);
  CHECK(g->error.find("must equal") != std::string::npos);
}

}  // namespace
}  // namespace neuron::extender
