// File: tests/operator/upgrade_drain_test.cc
// Driver upgrades that drain first (upgradePolicy.drain): reconcile passes against the fake
// kube-apiserver, which implements pods/eviction with PodDisruptionBudget arithmetic as the
// real one does. The test plays KMM (sets version.ready) and the ReplicaSet controller (puts a
// Ready replacement on a node that is not being drained after each eviction).
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "lib/k8s/events.h"
#include "lib/operator/upgrade.h"
#include "tests/fakes/fake_clock.h"
#include "tests/operator/operator_test_util.h"

namespace neuron::op {
namespace {

using nlohmann::json;
using namespace testutil;  // NOLINT(google-build-using-namespace): test helpers

constexpr char kApp[] = "default";
const k8s::ResourceRef kReplicaSets{"apps", "v1", "replicasets", true};
const k8s::ResourceRef kPdbs{"policy", "v1", "poddisruptionbudgets", true};

struct Drain {
  // Nodes trn-0..trn-2 on driver 1.0; a ReplicaSet "train" of three Ready Neuron pods: two on
  // trn-0, one on trn-1; a CPU pod on trn-0; a PDB over "train" with `budget`.
  Drain(const json& budget, const json& drain) {
    settings.ns = kNs;
    json labels = LoadYaml(kSample).front()["spec"].value("selector", json::object());
    labels[kVersionLabel] = "1.0";
    labels[kReadyLabel] = "1.0";
    for (int i = 0; i < 3; ++i) cluster.AddNode(absl::StrCat("trn-", i), labels);
    auto rs = cluster.client->Create(
        kReplicaSets, kApp,
        {{"apiVersion", "apps/v1"},
         {"kind", "ReplicaSet"},
         {"metadata", {{"name", "train"}, {"namespace", kApp}}},
         {"spec",
          {{"replicas", 3},
           {"selector", {{"matchLabels", {{"app", "train"}}}}},
           {"template", {{"metadata", {{"labels", {{"app", "train"}}}}}}}}}});
    REQUIRE(rs.ok());
    rs_uid = (*rs)["metadata"]["uid"].get<std::string>();
    AddPod("train-a", "trn-0", true);
    AddPod("train-b", "trn-0", true);
    AddPod("train-c", "trn-1", true);
    AddPod("web", "trn-0", false);
    json pdb = {{"apiVersion", "policy/v1"},
                {"kind", "PodDisruptionBudget"},
                {"metadata", {{"name", "train"}, {"namespace", kApp}}},
                {"spec", budget}};
    pdb["spec"]["selector"] = {{"matchLabels", {{"app", "train"}}}};
    REQUIRE(cluster.client->Create(kPdbs, kApp, pdb).ok());
    json dc = LoadYaml(kSample).front();
    dc["metadata"]["namespace"] = kNs;
    dc["spec"]["driverVersion"] = "1.0";
    dc["spec"]["upgradePolicy"] = {{"maxParallel", 2}, {"drain", drain}};
    REQUIRE(cluster.client->Create(DeviceConfigRef(), kNs, dc).ok());
    Restart();
    Pass();
  }

  void AddPod(const std::string& name, const std::string& node, bool neuron) {
    json pod = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", name}, {"namespace", kApp}}},
        {"spec", {{"nodeName", node}, {"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
    if (neuron) {
      pod["metadata"]["labels"] = {{"app", "train"}};
      pod["metadata"]["ownerReferences"] = {{{"apiVersion", "apps/v1"},
                                             {"kind", "ReplicaSet"},
                                             {"name", "train"},
                                             {"uid", rs_uid},
                                             {"controller", true}}};
      pod["spec"]["containers"][0]["resources"] = {
          {"limits", {{"aws.amazon.com/neuroncore", "2"}}}};
    }
    auto created = cluster.client->Create(k8s::resources::kPods, kApp, pod);
    REQUIRE(created.ok());
    json status = *created;
    status["status"] = {{"phase", "Running"},
                        {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}};
    REQUIRE(cluster.client->UpdateStatus(k8s::resources::kPods, kApp, status).ok());
  }

  void Restart() {
    reconciler = std::make_unique<Reconciler>(*cluster.client, settings, ListNodes(*cluster.client),
                                              &events, &clock);
  }
  ReconcileResult Pass() {
    auto r = reconciler->Reconcile(kNs, "neuron");
    CAPTURE(r.status().ToString());
    REQUIRE(r.ok());
    return *r;
  }

  json Node(const std::string& name) { return cluster.server.Get("/api/v1/nodes/" + name); }
  bool Cordoned(const std::string& node) {
    const json n = Node(node);
    return n.contains("spec") && n["spec"].value("unschedulable", false);
  }
  std::string Label(const std::string& node, const std::string& key) {
    return Node(node)["metadata"].value("labels", json::object()).value(key, "");
  }
  // The pods by node, as the apiserver has them.
  std::map<std::string, std::set<std::string>> Pods() {
    auto list = cluster.client->ListAll(k8s::resources::kPods, kApp);
    REQUIRE(list.ok());
    std::map<std::string, std::set<std::string>> out;
    for (const json& p : list->items) {
      out[p["spec"].value("nodeName", "")].insert(p["metadata"]["name"].get<std::string>());
    }
    return out;
  }
  int TrainPods() {
    int n = 0;
    for (const auto& [node, pods] : Pods()) {
      for (const std::string& p : pods) n += p.rfind("train", 0) == 0 ? 1 : 0;
    }
    return n;
  }
  // The ReplicaSet controller: a Ready replacement for each evicted pod, on trn-2.
  void Replace() {
    while (TrainPods() < 3) AddPod(absl::StrCat("train-r", ++replaced), "trn-2", true);
  }
  json Entry(const std::string& node) {
    for (const json& e : cluster.GetDc("neuron")["status"].value("nodes", json::array())) {
      if (e["name"] == node) return e;
    }
    return nullptr;
  }
  void UpgradeTo(const std::string& version) {
    REQUIRE(cluster.client
                ->Patch(DeviceConfigRef(), kNs, "neuron", k8s::PatchType::kMerge,
                        {{"spec", {{"driverVersion", version}}}})
                .ok());
  }

  Cluster cluster;
  fakes::FakeClock clock;
  k8s::EventRecorder events{*cluster.client, "neuron-operator", "", &clock};
  OperatorSettings settings;
  std::unique_ptr<Reconciler> reconciler;
  int replaced = 0;
  std::string rs_uid;
};

TEST_CASE("drain: evictions honour the budget, one disruption at a time, then upgrade",
          "[operator][upgrade][drain]") {
  Drain f({{"maxUnavailable", 1}}, {{"enable", true}, {"timeout", "10m"}});
  f.UpgradeTo("2.0");
  f.Pass();  // cordons trn-0 and trn-1 (maxParallel 2), no taint
  CHECK(f.Cordoned("trn-0"));
  CHECK(f.Cordoned("trn-1"));
  CHECK_FALSE(f.Cordoned("trn-2"));
  CHECK(f.Entry("trn-0")["state"] == "draining");
  CHECK(f.Node("trn-0")["spec"].value("taints", json::array()).empty());
  // Each pass evicts what the budget allows; the test's ReplicaSet replaces between passes.
  for (int pass = 0; pass < 12 && f.Label("trn-0", kVersionLabel) != "2.0"; ++pass) {
    const int before = f.TrainPods();
    f.Pass();
    CHECK(f.TrainPods() >= before - 1);  // never two disruptions at once
    CHECK(f.TrainPods() >= 2);
    f.Replace();
    f.clock.Advance(absl::Seconds(5));
  }
  f.Pass();
  CHECK(f.Label("trn-0", kVersionLabel) == "2.0");
  CHECK(f.Label("trn-1", kVersionLabel) == "2.0");
  CHECK(f.Pods()["trn-0"] == std::set<std::string>{"web"});  // a CPU pod is left alone
  CHECK(f.Pods()["trn-1"].empty());
  CHECK(f.Entry("trn-0")["state"] == "upgrading");
  // KMM loads 2.0: done and uncordoned; then trn-2 drains (its replacements go elsewhere).
  for (const char* n : {"trn-0", "trn-1"}) {
    REQUIRE(f.cluster.client
                ->Patch(k8s::resources::kNodes, "", n, k8s::PatchType::kMerge,
                        {{"metadata", {{"labels", {{kReadyLabel, "2.0"}}}}}})
                .ok());
  }
  f.Pass();
  CHECK(f.Entry("trn-0")["state"] == "done");
  CHECK_FALSE(f.Cordoned("trn-0"));
  CHECK(f.Label("trn-0", "k8s.aws/driver-drain.aws-neuron-operator.neuron").empty());
  CHECK(f.Cordoned("trn-2"));
}

TEST_CASE("drain: a budget that never allows it fails the node at the timeout, naming the pod",
          "[operator][upgrade][drain]") {
  Drain f({{"minAvailable", 3}}, {{"enable", true}, {"timeout", "10m"}});
  f.UpgradeTo("2.0");
  f.Pass();
  f.Pass();
  CHECK(f.Entry("trn-1")["state"] == "draining");
  CHECK(f.Entry("trn-1")["reason"].get<std::string>().find("default/train-c") != std::string::npos);
  f.clock.Advance(absl::Minutes(11));
  f.Pass();
  const json e = f.Entry("trn-1");
  CHECK(e["state"] == "failed");
  CHECK(e["reason"].get<std::string>().find("drain timed out after 10m") != std::string::npos);
  CHECK(e["reason"].get<std::string>().find("default/train-c") != std::string::npos);
  CHECK(f.Cordoned("trn-1"));                                    // stays cordoned
  CHECK(f.Pods()["trn-1"] == std::set<std::string>{"train-c"});  // never deleted around it
  CHECK(f.Label("trn-1", kVersionLabel) == "1.0");

  // Retry: a new annotation value sends it back; with the budget gone it drains and moves.
  f.Restart();  // an operator restarted mid-rollout carries on from the cluster
  REQUIRE(f.cluster.client->Delete(kPdbs, kApp, "train").ok());
  REQUIRE(f.cluster.client
              ->Patch(DeviceConfigRef(), kNs, "neuron", k8s::PatchType::kMerge,
                      {{"metadata", {{"annotations", {{kRetryUpgradeAnnotation, "1"}}}}}})
              .ok());
  f.Pass();
  CHECK(f.Entry("trn-1")["state"] == "draining");
  f.Pass();
  f.Pass();
  CHECK(f.Label("trn-1", kVersionLabel) == "2.0");
  CHECK(f.cluster.GetDc("neuron")["status"]["upgrade"]["retryHandled"] == "1");
  // The same value again retries nothing.
  f.Pass();
  CHECK(f.cluster.GetDc("neuron")["status"]["upgrade"]["retryHandled"] == "1");
}

TEST_CASE("drain: with force, the pods left at the timeout are deleted",
          "[operator][upgrade][drain]") {
  Drain f({{"minAvailable", 3}}, {{"enable", true}, {"timeout", "1m"}, {"force", true}});
  f.UpgradeTo("2.0");
  f.Pass();
  f.Pass();
  CHECK(f.Pods()["trn-1"] == std::set<std::string>{"train-c"});
  f.clock.Advance(absl::Minutes(2));
  f.Pass();  // deletes
  CHECK(f.Pods()["trn-1"].empty());
  f.Pass();  // nothing left: labelled
  CHECK(f.Label("trn-1", kVersionLabel) == "2.0");
}

}  // namespace
}  // namespace neuron::op
