// File: tests/operator/upgrade_test.cc
// Driver upgrades as a state machine: reconcile passes against the fake kube-apiserver on a
// fake clock, with the test playing KMM (it sets the version.ready label once a node is
// labelled for a version). Happy path over 10 nodes, a node that times out, maxParallel 3,
// pause and resume, nodes added and removed mid-rollout, an operator restarted mid-rollout and
// a DeviceConfig deleted mid-rollout.
#include "lib/operator/upgrade.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "lib/k8s/events.h"
#include "tests/fakes/fake_clock.h"
#include "tests/operator/operator_test_util.h"

namespace neuron::op {
namespace {

using nlohmann::json;
using namespace testutil;  // NOLINT(google-build-using-namespace): test helpers

std::string NodeName(int i) { return absl::StrCat("trn-", i < 10 ? "0" : "", i); }

json NeuronLabels() {
  const json dc = LoadYaml(kSample).front();
  return dc["spec"].value("selector", json::object());
}

struct Rollout {
  // `nodes` Neuron nodes already running driver `version` (labelled and reported ready), and
  // the sample DeviceConfig at that version with `policy`.
  Rollout(int nodes, const std::string& version, const json& policy = json::object()) {
    settings.ns = kNs;
    for (int i = 0; i < nodes; ++i) {
      json labels = NeuronLabels();
      labels[kVersionLabel] = version;
      labels[kReadyLabel] = version;
      cluster.AddNode(NodeName(i), labels);
    }
    json dc = LoadYaml(kSample).front();
    dc["metadata"]["namespace"] = kNs;
    dc["spec"]["driverVersion"] = version;
    if (!policy.empty()) dc["spec"]["upgradePolicy"] = policy;
    REQUIRE(cluster.client->Create(DeviceConfigRef(), kNs, dc).ok());
    Restart();
    Pass();
  }

  // A new operator process: nothing carried over but what is in the cluster.
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

  void PatchSpec(const json& spec) {
    REQUIRE(cluster.client
                ->Patch(DeviceConfigRef(), kNs, "neuron", k8s::PatchType::kMerge, {{"spec", spec}})
                .ok());
  }

  json Node(const std::string& name) { return cluster.server.Get("/api/v1/nodes/" + name); }

  std::string Label(const std::string& node, const std::string& key) {
    return Node(node)["metadata"].value("labels", json::object()).value(key, "");
  }

  bool Tainted(const std::string& node) {
    const json n = Node(node);
    for (const json& t :
         n.contains("spec") ? n["spec"].value("taints", json::array()) : json::array()) {
      if (t["key"] == kUpgradeTaintKey) {
        CHECK(t["effect"] == "NoExecute");
        return true;
      }
    }
    return false;
  }

  void SetLabels(const std::string& node, const json& labels) {
    REQUIRE(cluster.client
                ->Patch(k8s::resources::kNodes, "", node, k8s::PatchType::kMerge,
                        {{"metadata", {{"labels", labels}}}})
                .ok());
  }

  // What KMM does once the module loader for the labelled version runs on the node.
  void KmmLoads(const std::string& node) {
    SetLabels(node, {{kReadyLabel, Label(node, kVersionLabel)}});
  }

  // status.nodes as node -> state.
  std::map<std::string, std::string> States() {
    std::map<std::string, std::string> out;
    for (const json& e : cluster.GetDc("neuron")["status"].value("nodes", json::array())) {
      out[e["name"]] = e["state"];
    }
    return out;
  }

  std::vector<std::string> InState(const std::string& state) {
    std::vector<std::string> out;
    for (const auto& [node, s] : States()) {
      if (s == state) out.push_back(node);
    }
    return out;
  }

  json Entry(const std::string& node) {
    for (const json& e : cluster.GetDc("neuron")["status"].value("nodes", json::array())) {
      if (e["name"] == node) return e;
    }
    return nullptr;
  }

  std::vector<json> EventsIn(const std::string& ns, const std::string& reason) {
    auto list = cluster.client->ListAll(k8s::resources::kEvents, ns);
    REQUIRE(list.ok());
    std::vector<json> out;
    for (const json& e : list->items) {
      if (e.value("reason", "") == reason) out.push_back(e);
    }
    return out;
  }

  Cluster cluster;
  fakes::FakeClock clock;
  k8s::EventRecorder events{*cluster.client, "neuron-operator", "", &clock};
  OperatorSettings settings;
  std::unique_ptr<Reconciler> reconciler;
};

TEST_CASE("first install labels every node at once and without a taint", "[operator][upgrade]") {
  Cluster cluster;
  for (int i = 0; i < 4; ++i) cluster.AddNode(NodeName(i), NeuronLabels());
  cluster.AddNode("cpu-0", {{"node.kubernetes.io/instance-type", "m5.large"}});
  json dc = LoadYaml(kSample).front();
  dc["metadata"]["namespace"] = kNs;
  dc["spec"]["driverVersion"] = "2.28.0";
  REQUIRE(cluster.client->Create(DeviceConfigRef(), kNs, dc).ok());
  fakes::FakeClock clock;
  OperatorSettings settings;
  settings.ns = kNs;
  Reconciler reconciler(*cluster.client, settings, ListNodes(*cluster.client), nullptr, &clock);
  auto r = reconciler.Reconcile(kNs, "neuron");
  REQUIRE(r.ok());
  REQUIRE(r->requeue_after.has_value());  // the deadline of the nodes under way
  CHECK(*r->requeue_after <= absl::Minutes(15));
  for (int i = 0; i < 4; ++i) {
    const json n = cluster.server.Get("/api/v1/nodes/" + NodeName(i));
    CHECK(n["metadata"]["labels"][kVersionLabel] == "2.28.0");
    CHECK_FALSE(n.contains("/spec/taints"_json_pointer));
  }
  CHECK_FALSE(
      cluster.server.Get("/api/v1/nodes/cpu-0")["metadata"]["labels"].contains(kVersionLabel));
  const json status = cluster.GetDc("neuron")["status"];
  CHECK(status["upgrade"]["nodesUpgrading"] == 4);
  CHECK(CondReason(cluster.GetDc("neuron"), "Upgrading") == "RollingOut");
}

TEST_CASE("without KMM no node is labelled or tainted", "[operator][upgrade]") {
  Cluster cluster({"nfd"});
  cluster.AddNode(NodeName(0), NeuronLabels());
  json dc = LoadYaml(kSample).front();
  dc["metadata"]["namespace"] = kNs;
  dc["spec"]["driverVersion"] = "2.28.0";
  REQUIRE(cluster.client->Create(DeviceConfigRef(), kNs, dc).ok());
  OperatorSettings settings;
  settings.ns = kNs;
  Reconciler reconciler(*cluster.client, settings, ListNodes(*cluster.client));
  REQUIRE(reconciler.Reconcile(kNs, "neuron").ok());
  const json node = cluster.server.Get("/api/v1/nodes/" + NodeName(0));
  CHECK_FALSE(node["metadata"]["labels"].contains(kVersionLabel));
  CHECK_FALSE(node.contains("/spec/taints"_json_pointer));
  CHECK(CondReason(cluster.GetDc("neuron"), "DriverReady") == "KMMNotInstalled");
}

TEST_CASE("a version change moves 10 nodes one at a time; done nodes are never touched again",
          "[operator][upgrade]") {
  Rollout f(10, "2.28.0");
  CHECK(f.States().size() == 10);
  CHECK(f.InState("done").size() == 10);
  CHECK(CondStatus(f.cluster.GetDc("neuron"), "Upgrading") == "False");
  CHECK(CondReason(f.cluster.GetDc("neuron"), "Upgrading") == "UpToDate");

  f.PatchSpec({{"driverVersion", "2.29.0"}});
  std::map<std::string, std::string> done_rv;  // node -> resourceVersion when it became done
  std::vector<std::string> order;
  f.Pass();
  for (int step = 0; step < 12 && f.InState("done").size() < 10; ++step) {
    for (const auto& [node, rv] : done_rv) {
      CAPTURE(node);
      CHECK(f.Node(node)["metadata"]["resourceVersion"] == rv);  // not touched again
    }
    const std::vector<std::string> upgrading = f.InState("upgrading");
    int tainted = 0;
    for (int i = 0; i < 10; ++i) tainted += f.Tainted(NodeName(i));
    CAPTURE(step);
    if (f.InState("done").size() == 10) break;
    REQUIRE(upgrading.size() == 1);
    CHECK(tainted == 1);
    const std::string& node = upgrading.front();
    CHECK(f.Tainted(node));
    CHECK(f.Label(node, kVersionLabel) == "2.29.0");
    CHECK(f.Entry(node)["reason"].get<std::string>().find("from 2.28.0") != std::string::npos);
    CHECK(f.InState("pending").size() == 9 - f.InState("done").size());
    CHECK(CondReason(f.cluster.GetDc("neuron"), "Upgrading") == "RollingOut");
    order.push_back(node);
    f.clock.Advance(absl::Minutes(2));
    f.KmmLoads(node);
    f.Pass();  // the node is done: its taint comes off, and the next starts
    CHECK_FALSE(f.Tainted(node));
    CHECK(f.Label(node, kVersionLabel) == "2.29.0");
    CHECK(f.States()[node] == "done");
    done_rv[node] = f.Node(node)["metadata"]["resourceVersion"];
  }
  CHECK(f.InState("done").size() == 10);
  CHECK(order.size() == 10);
  CHECK(std::is_sorted(order.begin(), order.end()));
  for (int i = 0; i < 10; ++i) {
    CHECK(f.Label(NodeName(i), kVersionLabel) == "2.29.0");
    CHECK_FALSE(f.Tainted(NodeName(i)));
  }
  const json dc = f.cluster.GetDc("neuron");
  CHECK(CondReason(dc, "Upgrading") == "UpToDate");
  CHECK(dc["status"]["upgrade"]["driverVersion"] == "2.29.0");
  CHECK(dc["status"]["upgrade"]["nodesDone"] == 10);
  // Every transition is an Event on the DeviceConfig and on the node.
  CHECK(f.EventsIn(kNs, "DriverUpgrading").size() == 10);
  CHECK(f.EventsIn(kNs, "DriverUpgraded").size() == 10);
  const std::vector<json> on_nodes = f.EventsIn("default", "DriverUpgraded");
  REQUIRE(on_nodes.size() == 10);
  CHECK(on_nodes.front()["involvedObject"]["kind"] == "Node");
}

TEST_CASE("a node that passes its timeout fails, keeps its taint and stops the rollout",
          "[operator][upgrade]") {
  Rollout f(3, "2.28.0", {{"nodeTimeout", "10m"}});
  f.PatchSpec({{"driverVersion", "2.29.0"}});
  ReconcileResult r = f.Pass();
  const std::string stuck = NodeName(0);
  REQUIRE(f.States()[stuck] == "upgrading");
  REQUIRE(r.requeue_after.has_value());
  CHECK(*r.requeue_after <= absl::Minutes(10));  // the pass that notices the timeout
  REQUIRE(r.upgrade.has_value());                // what the operator's rollout metrics show
  CHECK(r.upgrade->upgrading == 1);
  CHECK(r.upgrade->pending == 2);
  CHECK(r.upgrade->longest_upgrading == absl::ZeroDuration());

  f.clock.Advance(absl::Minutes(9));
  r = f.Pass();
  CHECK(f.States()[stuck] == "upgrading");
  REQUIRE(r.upgrade.has_value());
  CHECK(r.upgrade->longest_upgrading == absl::Minutes(9));
  f.clock.Advance(absl::Minutes(1));
  r = f.Pass();
  CHECK(f.States()[stuck] == "failed");
  REQUIRE(r.upgrade.has_value());
  CHECK(r.upgrade->failed == 1);
  CHECK(r.upgrade->upgrading == 0);
  CHECK(r.upgrade->longest_upgrading == absl::ZeroDuration());
  CHECK(f.Tainted(stuck));
  json dc = f.cluster.GetDc("neuron");
  CHECK(CondReason(dc, "Upgrading") == "NodeFailed");
  CHECK(CondMessage(dc, "Upgrading").find(stuck) != std::string::npos);
  CHECK(CondStatus(dc, "Degraded") == "True");
  CHECK(CondReason(dc, "Degraded") == "DriverUpgradeFailed");
  CHECK(CondMessage(dc, "Degraded").find(stuck) != std::string::npos);
  CHECK(f.Entry(stuck)["reason"].get<std::string>().find("10m") != std::string::npos);
  CHECK(f.EventsIn(kNs, "DriverUpgradeFailed").size() == 1);
  CHECK(f.EventsIn("default", "DriverUpgradeFailed").size() == 1);

  // Stopped: however long it waits, no other node starts, and the failure stays recorded.
  const std::string failed_since = f.Entry(stuck)["since"];
  f.clock.Advance(absl::Hours(2));
  f.Pass();
  CHECK(f.InState("pending").size() == 2);
  CHECK_FALSE(f.Tainted(NodeName(1)));
  CHECK(f.Entry(stuck)["since"] == failed_since);
  CHECK(f.Entry(NodeName(1))["reason"].get<std::string>().find("stopped") != std::string::npos);

  // The driver comes up late: the node is done, its taint comes off and the rollout goes on.
  f.KmmLoads(stuck);
  f.Pass();
  CHECK(f.States()[stuck] == "done");
  CHECK_FALSE(f.Tainted(stuck));
  CHECK(f.States()[NodeName(1)] == "upgrading");
  dc = f.cluster.GetDc("neuron");
  CHECK(CondStatus(dc, "Degraded") == "False");
  CHECK(CondReason(dc, "Upgrading") == "RollingOut");
}

TEST_CASE("maxParallel 3 keeps three nodes in flight", "[operator][upgrade]") {
  Rollout f(10, "2.28.0", {{"maxParallel", 3}});
  f.PatchSpec({{"driverVersion", "2.29.0"}});
  f.Pass();
  std::vector<std::string> upgrading = f.InState("upgrading");
  REQUIRE(upgrading.size() == 3);
  CHECK(upgrading == std::vector<std::string>{NodeName(0), NodeName(1), NodeName(2)});
  for (const std::string& n : upgrading) CHECK(f.Tainted(n));
  CHECK(f.Entry(NodeName(3))["reason"].get<std::string>().find("maxParallel 3") !=
        std::string::npos);

  f.KmmLoads(NodeName(1));
  f.Pass();
  upgrading = f.InState("upgrading");
  CHECK(upgrading == std::vector<std::string>{NodeName(0), NodeName(2), NodeName(3)});
  for (int step = 0; step < 10 && f.InState("done").size() < 10; ++step) {
    upgrading = f.InState("upgrading");
    CHECK(upgrading.size() <= 3);
    for (const std::string& n : upgrading) f.KmmLoads(n);
    f.Pass();
  }
  CHECK(f.InState("done").size() == 10);
}

TEST_CASE("paused starts no node, lets those under way finish, and resumes",
          "[operator][upgrade]") {
  Rollout f(4, "2.28.0");
  f.PatchSpec({{"driverVersion", "2.29.0"}});
  f.Pass();
  REQUIRE(f.InState("upgrading") == std::vector<std::string>{NodeName(0)});
  f.PatchSpec({{"upgradePolicy", {{"paused", true}}}});
  f.KmmLoads(NodeName(0));
  f.Pass();
  CHECK(f.States()[NodeName(0)] == "done");
  CHECK_FALSE(f.Tainted(NodeName(0)));  // finishing is not starting
  CHECK(f.InState("upgrading").empty());
  CHECK(f.InState("pending").size() == 3);
  json dc = f.cluster.GetDc("neuron");
  CHECK(CondReason(dc, "Upgrading") == "Paused");
  CHECK(f.Entry(NodeName(1))["reason"].get<std::string>().find("paused") != std::string::npos);
  f.clock.Advance(absl::Hours(1));
  f.Pass();
  CHECK(f.InState("upgrading").empty());

  f.PatchSpec({{"upgradePolicy", {{"paused", false}}}});
  f.Pass();
  CHECK(f.InState("upgrading") == std::vector<std::string>{NodeName(1)});
  CHECK(CondReason(f.cluster.GetDc("neuron"), "Upgrading") == "RollingOut");
}

TEST_CASE("nodes added and removed mid-rollout", "[operator][upgrade]") {
  Rollout f(3, "2.28.0");
  f.PatchSpec({{"driverVersion", "2.29.0"}});
  f.Pass();
  REQUIRE(f.InState("upgrading") == std::vector<std::string>{NodeName(0)});

  // A new node has no driver of ours yet: labelled for the target at once, no taint.
  f.cluster.AddNode("trn-new", NeuronLabels());
  // The upgrading node is deleted (scaled in).
  REQUIRE(f.cluster.client->Delete(k8s::resources::kNodes, "", NodeName(0)).ok());
  // Another node leaves the selector: our label goes, and no taint is left behind.
  json labels = NeuronLabels();
  for (auto& [k, v] : labels.items()) v = nullptr;
  f.SetLabels(NodeName(2), labels);
  f.Pass();

  CHECK(f.Label("trn-new", kVersionLabel) == "2.29.0");
  CHECK_FALSE(f.Tainted("trn-new"));
  CHECK(f.States().count(NodeName(0)) == 0);
  CHECK(f.States().count(NodeName(2)) == 0);
  CHECK(f.Label(NodeName(2), kVersionLabel).empty());
  CHECK(f.Label(NodeName(2), kReadyLabel).empty());
  CHECK_FALSE(f.Tainted(NodeName(2)));
  // trn-new is in flight (maxParallel 1): trn-01 waits for it.
  CHECK(f.States()["trn-new"] == "upgrading");
  CHECK(f.States()[NodeName(1)] == "pending");
  f.KmmLoads("trn-new");
  f.Pass();
  CHECK(f.States()["trn-new"] == "done");
  CHECK(f.States()[NodeName(1)] == "upgrading");
  CHECK(f.Tainted(NodeName(1)));
}

TEST_CASE("an operator restarted mid-rollout resumes from the labels and status",
          "[operator][upgrade]") {
  Rollout f(4, "2.28.0", {{"nodeTimeout", "15m"}});
  f.PatchSpec({{"driverVersion", "2.29.0"}});
  f.Pass();
  f.KmmLoads(NodeName(0));
  f.Pass();
  REQUIRE(f.States()[NodeName(0)] == "done");
  REQUIRE(f.InState("upgrading") == std::vector<std::string>{NodeName(1)});
  const std::string since = f.Entry(NodeName(1))["since"];
  const std::string done_rv = f.Node(NodeName(0))["metadata"]["resourceVersion"];

  f.clock.Advance(absl::Minutes(10));
  f.Restart();
  f.Pass();
  CHECK(f.Node(NodeName(0))["metadata"]["resourceVersion"] == done_rv);
  CHECK(f.States()[NodeName(0)] == "done");
  CHECK(f.InState("upgrading") == std::vector<std::string>{NodeName(1)});
  CHECK(f.Entry(NodeName(1))["since"] == since);  // its timer did not restart
  f.clock.Advance(absl::Minutes(5));
  f.Restart();
  f.Pass();
  CHECK(f.States()[NodeName(1)] == "failed");  // 15 minutes since it started, across restarts
}

TEST_CASE("deleting the DeviceConfig mid-rollout takes the labels and taints off every node",
          "[operator][upgrade]") {
  Rollout f(3, "2.28.0", {{"maxParallel", 2}});
  f.PatchSpec({{"driverVersion", "2.29.0"}});
  f.Pass();
  REQUIRE(f.InState("upgrading").size() == 2);
  REQUIRE(f.Tainted(NodeName(0)));
  // Someone else's taint stays.
  json node = f.Node(NodeName(0));
  node["spec"]["taints"].push_back({{"key", "example.com/maintenance"}, {"effect", "NoSchedule"}});
  REQUIRE(f.cluster.server.Put("/api/v1/nodes/" + NodeName(0), node).ok());

  REQUIRE(f.cluster.client->Delete(DeviceConfigRef(), kNs, "neuron").ok());
  for (int i = 0; i < 5 && !f.cluster.GetDc("neuron").is_null(); ++i) f.Pass();
  CHECK(f.cluster.GetDc("neuron").is_null());
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(f.Label(NodeName(i), kVersionLabel).empty());
    CHECK(f.Label(NodeName(i), kReadyLabel).empty());
    CHECK_FALSE(f.Tainted(NodeName(i)));
  }
  const json taints = f.Node(NodeName(0))["spec"]["taints"];
  REQUIRE(taints.size() == 1);
  CHECK(taints[0]["key"] == "example.com/maintenance");
}

TEST_CASE("clearing driverVersion ends version management and cleans the nodes",
          "[operator][upgrade]") {
  Rollout f(2, "2.28.0");
  f.PatchSpec({{"driverVersion", "2.29.0"}});
  f.Pass();
  REQUIRE(f.Tainted(NodeName(0)));
  f.PatchSpec({{"driverVersion", nullptr}});
  f.Pass();
  for (int i = 0; i < 2; ++i) {
    CHECK(f.Label(NodeName(i), kVersionLabel).empty());
    CHECK_FALSE(f.Tainted(NodeName(i)));
  }
  const json dc = f.cluster.GetDc("neuron");
  CHECK(CondReason(dc, "Upgrading") == "NotVersioned");
  CHECK_FALSE(dc["status"].contains("nodes"));
}

TEST_CASE("a node changed between plan and patch is a conflict, and the retry converges",
          "[operator][upgrade]") {
  Rollout f(2, "2.28.0");
  f.PatchSpec({{"driverVersion", "2.29.0"}});
  // Plan from a stale view of trn-00: the patch carries the old resourceVersion.
  const json stale = f.Node(NodeName(0));
  f.SetLabels(NodeName(0), {{"example.com/touched", "yes"}});
  std::vector<NodeUpgrade> none;
  auto dc = ParseDeviceConfig(f.cluster.GetDc("neuron"));
  REQUIRE(dc.ok());
  const UpgradePlan plan = PlanUpgrade(*dc, {stale, f.Node(NodeName(1))}, none, f.clock.Now());
  REQUIRE(!plan.changes.empty());
  auto r = f.cluster.client->Patch(k8s::resources::kNodes, "", plan.changes.front().node,
                                   k8s::PatchType::kMerge, plan.changes.front().Patch());
  CHECK(r.status().code() == absl::StatusCode::kAborted);       // 409
  CHECK(f.Label(NodeName(0), "example.com/touched") == "yes");  // nothing lost
  f.Pass();
  CHECK(f.Tainted(NodeName(0)));
  CHECK(f.Label(NodeName(0), "example.com/touched") == "yes");
}

TEST_CASE("upgradePolicy is read and checked", "[operator][upgrade]") {
  json obj = LoadYaml(kSample).front();
  obj["spec"]["upgradePolicy"] = {{"maxParallel", 4}, {"nodeTimeout", "1h30m"}, {"paused", true}};
  auto dc = ParseDeviceConfig(obj);
  REQUIRE(dc.ok());
  CHECK(ValidateDeviceConfig(*dc).empty());
  CHECK(dc->spec.upgrade.max_parallel == 4);
  CHECK(dc->spec.upgrade.node_timeout == absl::Minutes(90));
  CHECK(dc->spec.upgrade.paused);
  for (const json& bad : {json{{"maxParallel", 0}}, json{{"maxParallel", "2"}},
                          json{{"maxParallel", int64_t{1} << 40}}, json{{"nodeTimeout", "soon"}},
                          json{{"nodeTimeout", "-5m"}}, json{{"paused", "yes"}}, json("x")}) {
    obj["spec"]["upgradePolicy"] = bad;
    auto parsed = ParseDeviceConfig(obj);
    REQUIRE(parsed.ok());
    const auto errors = ValidateDeviceConfig(*parsed);
    CAPTURE(bad.dump());
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].field.rfind("spec.upgradePolicy", 0) == 0);
  }
}

}  // namespace
}  // namespace neuron::op
