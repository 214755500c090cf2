// File: tests/deviceplugin/handshake_test.cc
// Pod handshake: planning (pure), the pending-choice hint, and a full pass over the fake
// kubelet's PodResources socket with a recording PodDirectory.
#include "lib/deviceplugin/handshake.h"

#include "catch2/catch.hpp"
#include "lib/deviceplugin/pod_resources.h"
#include "tests/fakes/kubelet/fake_kubelet.h"

namespace neuron::deviceplugin {
namespace {

class RecordingPods final : public PodDirectory {
 public:
  std::vector<PodAnnotations> pods;
  std::vector<AnnotationPatch> patches;
  absl::StatusOr<std::vector<PodAnnotations>> ListNodePods() override { return pods; }
  absl::Status PatchAnnotations(const std::string& ns, const std::string& name,
                                const std::map<std::string, std::string>& set) override {
    patches.push_back({ns, name, set});
    for (auto& p : pods) {
      if (p.ns == ns && p.name == name) {
        for (const auto& [k, v] : set) p.annotations[k] = v;
      }
    }
    return absl::OkStatus();
  }
};

PodAnnotations Bound(const std::string& name, const std::string& ids, const std::string& type,
                     const std::string& time) {
  return {"ml",
          name,
          {{assignment::kAnnotationIds, ids},
           {assignment::kAnnotationType, type},
           {assignment::kAnnotationAllocated, "false"},
           {assignment::kAnnotationAllocTime, time},
           {"team", "infra"}}};
}

TEST_CASE("PlanHandshake patches only what differs", "[handshake]") {
  std::vector<PodAnnotations> pods = {Bound("a", "0,1", "neuroncore", "10"),
                                      Bound("b", "4", "neuron", "20")};
  std::vector<PodHoldings> held = {{"ml", "a", {{assignment::ResourceKind::kCore, {3, 2}}}},
                                   {"ml", "b", {{assignment::ResourceKind::kDevice, {4}}}},
                                   {"ml", "ghost", {{assignment::ResourceKind::kDevice, {1}}}}};
  auto plan = PlanHandshake(held, pods);
  REQUIRE(plan.size() == 2);
  CHECK(plan[0].name == "a");
  CHECK(plan[0].set ==
        std::map<std::string, std::string>{{assignment::kAnnotationIds, "2,3"},
                                           {assignment::kAnnotationAllocated, "true"}});
  CHECK(plan[1].set ==
        std::map<std::string, std::string>{{assignment::kAnnotationAllocated, "true"}});
  // Already in agreement: nothing to do.
  pods[1].annotations[assignment::kAnnotationAllocated] = "true";
  CHECK(PlanHandshake({held[1]}, pods).empty());
}

TEST_CASE("PendingChoice picks the oldest matching pod", "[handshake]") {
  std::vector<PodAnnotations> pods = {
      Bound("new", "4,5", "neuroncore", "200"), Bound("old", "6,7", "neuroncore", "100"),
      Bound("dev", "1,2", "neuron", "50"), Bound("junk", "x", "neuroncore", "1")};
  pods.push_back(Bound("done", "0,1", "neuroncore", "10"));
  pods.back().annotations[assignment::kAnnotationAllocated] = "true";
  CHECK(PendingChoice(pods, assignment::ResourceKind::kCore, 2) == std::vector<int>{6, 7});
  CHECK(PendingChoice(pods, assignment::ResourceKind::kDevice, 2) == std::vector<int>{1, 2});
  CHECK_FALSE(PendingChoice(pods, assignment::ResourceKind::kCore, 3).has_value());
}

// The kubelet reports a device an init container handed on to an app container under both; the
// annotation used to read "3,3", which ParseIdList (the extender) rejects.
TEST_CASE("HoldingsFromList unions IDs over containers without duplicates", "[handshake]") {
  v1::ListPodResourcesResponse resp;
  auto* pod = resp.add_pod_resources();
  pod->set_namespace_("ml");
  pod->set_name("train");
  for (const char* name : {"init", "main"}) {
    auto* c = pod->add_containers();
    c->set_name(name);
    auto* d = c->add_devices();
    d->set_resource_name("aws.amazon.com/neuron");
    d->add_device_ids("3");
    d->add_device_ids("01");  // not an index of ours: ignored
  }
  pod->mutable_containers(1)->mutable_devices(0)->add_device_ids("1");
  auto* empty = resp.add_pod_resources();
  empty->set_name("cpu-only");
  empty->add_containers()->add_devices()->set_resource_name("vendor.com/gpu");
  *resp.add_pod_resources() = *pod;  // a repeated entry merges into the first
  resp.mutable_pod_resources(2)->mutable_containers(0)->mutable_devices(0)->add_device_ids("0");

  std::vector<PodHoldings> held = HoldingsFromList(resp);
  REQUIRE(held.size() == 1);
  CHECK(held[0].ids.at(assignment::ResourceKind::kDevice) == std::vector<int>{0, 1, 3});
  auto plan = PlanHandshake(held, {Bound("train", "", "neuron", "1")});
  REQUIRE(plan.size() == 1);
  CHECK(plan[0].set.at(assignment::kAnnotationIds) == "0,1,3");
  CHECK(assignment::ParseIdList(plan[0].set.at(assignment::kAnnotationIds)).ok());
}

TEST_CASE("Handshake pass over a real PodResources socket", "[handshake][integration]") {
  fakes::FakeKubelet kubelet;
  REQUIRE(kubelet.StartPodResources().ok());
  v1::ListPodResourcesResponse resp;
  auto* pod = resp.add_pod_resources();
  pod->set_namespace_("ml");
  pod->set_name("train");
  auto* c = pod->add_containers();
  c->set_name("main");
  auto* d = c->add_devices();
  d->set_resource_name("aws.amazon.com/neuroncore");
  d->add_device_ids("9");
  d->add_device_ids("8");
  auto* other = c->add_devices();
  other->set_resource_name("vendor.com/gpu");
  other->add_device_ids("GPU-1");
  kubelet.SetPodResources(resp);

  auto held = ListPodHoldings(kubelet.pod_resources_socket());
  REQUIRE(held.ok());
  REQUIRE(held->size() == 1);
  CHECK(held->at(0).ids.at(assignment::ResourceKind::kCore) == std::vector<int>{8, 9});

  RecordingPods pods;
  pods.pods = {Bound("train", "8,9", "neuroncore", "5")};
  const std::string socket = kubelet.pod_resources_socket();
  Handshake hs(pods, [socket] { return ListPodHoldings(socket); });
  CHECK(hs.HintFor(assignment::ResourceKind::kCore, 2) == std::vector<int>{8, 9});
  REQUIRE(hs.Reconcile().ok());
  REQUIRE(pods.patches.size() == 1);
  CHECK(pods.patches[0].set ==
        std::map<std::string, std::string>{{assignment::kAnnotationAllocated, "true"}});
  CHECK(pods.pods[0].annotations.at("team") == "infra");                    // other keys untouched
  CHECK_FALSE(hs.HintFor(assignment::ResourceKind::kCore, 2).has_value());  // no longer pending
  REQUIRE(hs.Reconcile().ok());
  CHECK(hs.patches_applied() == 1);  // idempotent
  CHECK(kubelet.pod_resources_list_calls() == 3);

  CHECK_FALSE(ListPodHoldings(kubelet.dir() + "/nope.sock").ok());
}

}  // namespace
}  // namespace neuron::deviceplugin
