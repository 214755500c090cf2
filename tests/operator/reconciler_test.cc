// File: tests/operator/reconciler_test.cc
// Reconcile passes against the fake kube-apiserver: children applied as render says, status as
// children become ready, staged deletion, missing optional APIs, overlapping selectors,
// invalid specs and API errors.
#include "lib/operator/reconciler.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "lib/k8s/errors.h"
#include "lib/operator/children.h"
#include "tests/operator/operator_test_util.h"

namespace neuron::op {
namespace {

using nlohmann::json;
using namespace testutil;  // NOLINT(google-build-using-namespace): test helpers

constexpr char kSampleAlpha[] = "deploy/operator/samples/deviceconfig-v1alpha1.yaml";

std::string Path(const Child& c) {
  return k8s::ResourcePath(c.ref, c.ref.namespaced ? kNs : "",
                           c.object["metadata"].value("name", ""));
}

// Every field `want` sets is in `got` with the same value (the server adds its own fields).
bool Contains(const json& got, const json& want) {
  if (want.is_object()) {
    if (!got.is_object()) return false;
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (!got.contains(it.key()) || !Contains(got[it.key()], it.value())) return false;
    }
    return true;
  }
  if (want.is_array()) {
    if (!got.is_array() || got.size() != want.size()) return false;
    for (size_t i = 0; i < want.size(); ++i) {
      if (!Contains(got[i], want[i])) return false;
    }
    return true;
  }
  return got == want;
}

// Labels that make a node match the sample's selector.
json SampleNodeLabels() {
  const json dc = LoadYaml(kSample).front();
  json labels = dc["spec"].value("selector", json::object());
  labels["node.kubernetes.io/instance-type"] = "trn1.32xlarge";
  return labels;
}

struct Fixture {
  explicit Fixture(const std::vector<std::string>& apis = {"kmm", "nfd"}) : cluster(apis) {
    settings.ns = kNs;
    reconciler =
        std::make_unique<Reconciler>(*cluster.client, settings, ListNodes(*cluster.client));
  }
  ReconcileResult Pass(const std::string& name = "neuron") {
    auto r = reconciler->Reconcile(kNs, name);
    CAPTURE(r.status().ToString());
    REQUIRE(r.ok());
    return *r;
  }
  std::vector<Child> Desired(const std::string& name = "neuron") {
    auto dc = ParseDeviceConfig(cluster.GetDc(name));
    REQUIRE(dc.ok());
    auto apis = reconciler->DiscoverApis();
    REQUIRE(apis.ok());
    return DesiredChildren(*dc, *apis, settings);
  }
  Cluster cluster;
  OperatorSettings settings;
  std::unique_ptr<Reconciler> reconciler;
};

TEST_CASE("a pass applies exactly what render produces, owned by the DeviceConfig",
          "[operator][reconcile]") {
  for (const char* sample : {kSample, kSampleAlpha}) {
    Fixture f;
    f.cluster.AddNode("trn-a", SampleNodeLabels());
    const json created = f.cluster.CreateSample(sample);
    f.Pass();
    const json dc = f.cluster.GetDc("neuron");
    const json fins = dc["metadata"].value("finalizers", json::array());
    CHECK(std::count(fins.begin(), fins.end(), kFinalizer) == 1);
    const std::vector<Child> want = f.Desired();
    REQUIRE(want.size() >= 6);
    for (const Child& c : want) {
      const json live = f.cluster.server.Get(Path(c));
      CAPTURE(sample, Path(c));
      REQUIRE(!live.is_null());
      CHECK(Contains(live, c.object));
      if (c.ref.namespaced) {
        const json refs = live["metadata"]["ownerReferences"];
        REQUIRE(refs.size() == 1);
        CHECK(refs[0]["uid"] == created["metadata"]["uid"]);
        CHECK(refs[0]["controller"] == true);
      }
    }
    // A second pass changes nothing: same resourceVersions.
    std::vector<std::string> rvs;
    for (const Child& c : want) {
      rvs.push_back(f.cluster.server.Get(Path(c))["metadata"]["resourceVersion"]);
    }
    f.Pass();
    for (size_t i = 0; i < want.size(); ++i) {
      CHECK(f.cluster.server.Get(Path(want[i]))["metadata"]["resourceVersion"] == rvs[i]);
    }
  }
}

// Every child reports ready on `nodes` nodes, as KMM and the workload controllers would.
void ReportAllReady(Cluster& cluster, int nodes) {
  const std::string ns = kNs;
  const json counts = {
      {"nodesMatchingSelectorNumber", nodes}, {"desiredNumber", nodes}, {"availableNumber", nodes}};
  cluster.SetStatus("/apis/kmm.sigs.x-k8s.io/v1beta1/namespaces/" + ns + "/modules/neuron",
                    {{"moduleLoader", counts}, {"devicePlugin", counts}});
  // The one scheduler Deployment: kube-scheduler and its extender in each of its 2 replicas.
  const std::string path =
      "/apis/apps/v1/namespaces/" + ns + "/deployments/neuron-custom-scheduler";
  const json live = cluster.server.Get(path);
  cluster.SetStatus(path, {{"observedGeneration", live["metadata"]["generation"]},
                           {"replicas", 2},
                           {"updatedReplicas", 2},
                           {"availableReplicas", 2},
                           {"readyReplicas", 2}});
  const std::string ds = "/apis/apps/v1/namespaces/" + ns + "/daemonsets/neuron-node-metrics";
  cluster.SetStatus(ds, {{"observedGeneration", cluster.server.Get(ds)["metadata"]["generation"]},
                         {"desiredNumberScheduled", nodes},
                         {"currentNumberScheduled", nodes},
                         {"updatedNumberScheduled", nodes},
                         {"numberAvailable", nodes},
                         {"numberReady", nodes},
                         {"numberMisscheduled", 0}});
}

TEST_CASE("status follows the children as they become ready", "[operator][reconcile]") {
  Fixture f;
  f.cluster.AddNode("trn-a", SampleNodeLabels());
  f.cluster.AddNode("trn-b", SampleNodeLabels());
  f.cluster.CreateSample(kSample);
  f.Pass();
  json dc = f.cluster.GetDc("neuron");
  CHECK(dc["status"]["observedGeneration"] == dc["metadata"]["generation"]);
  CHECK(CondStatus(dc, "Ready") == "False");
  CHECK(CondReason(dc, "Ready") == "ComponentsNotReady");
  CHECK(CondStatus(dc, "DriverReady") == "False");
  CHECK(CondStatus(dc, "Degraded") == "False");

  // KMM reports the module loaded and the plugin running on both nodes.
  const std::string ns = kNs;
  f.cluster.SetStatus(
      "/apis/kmm.sigs.x-k8s.io/v1beta1/namespaces/" + ns + "/modules/neuron",
      {{"moduleLoader",
        {{"nodesMatchingSelectorNumber", 2}, {"desiredNumber", 2}, {"availableNumber", 2}}},
       {"devicePlugin",
        {{"nodesMatchingSelectorNumber", 2}, {"desiredNumber", 2}, {"availableNumber", 1}}}});
  f.Pass();
  dc = f.cluster.GetDc("neuron");
  CHECK(CondStatus(dc, "DriverReady") == "True");
  CHECK(CondStatus(dc, "DevicePluginReady") == "False");
  CHECK(CondMessage(dc, "DevicePluginReady").find("1 of 2") != std::string::npos);
  CHECK(dc["status"]["driver"]["availableNumber"] == 2);
  CHECK(dc["status"]["driverSummary"] == "2/2");

  ReportAllReady(f.cluster, 2);
  f.Pass();
  dc = f.cluster.GetDc("neuron");
  CAPTURE(dc["status"].dump(2));
  CHECK(CondStatus(dc, "Ready") == "True");
  CHECK(CondStatus(dc, "SchedulerReady") == "True");
  CHECK(CondMessage(dc, "SchedulerReady") ==
        "custom kube-scheduler with its extender: 2 of 2 replicas available");
  CHECK(dc["status"]["schedulerSummary"] == "2/2");
  CHECK(CondStatus(dc, "MetricsReady") == "True");
  CHECK(dc["status"]["devicePluginSummary"] == "2/2");
}

TEST_CASE("the seed README's v1alpha1 sample, read at v1beta1, reaches Ready",
          "[operator][reconcile]") {
  Fixture f;
  f.cluster.AddNode("trn-a", SampleNodeLabels());
  const json created = f.cluster.CreateSample("tests/operator/testdata/seed-readme-v1alpha1.yaml");
  REQUIRE(created["apiVersion"] == "k8s.aws/v1alpha1");
  // The apiserver serves the object at the version asked for, as the operator reads it.
  REQUIRE(f.cluster.GetDc("neuron")["apiVersion"] == "k8s.aws/v1beta1");
  f.Pass();
  json dc = f.cluster.GetDc("neuron");
  CHECK(CondReason(dc, "Ready") == "ComponentsNotReady");
  ReportAllReady(f.cluster, 1);
  f.Pass();
  dc = f.cluster.GetDc("neuron");
  CAPTURE(dc["status"].dump(2));
  CHECK(CondStatus(dc, "Ready") == "True");
  CHECK(CondStatus(dc, "Degraded") == "False");
}

// Upgrade from the extender's own Deployment behind a Service: the previous operator's
// scheduler component, as it rendered it, goes to the new shape in one pass, and what the new
// shape has no place for (the extender's Deployment, Service, account and ClusterRole with its
// binding) is deleted.
TEST_CASE("one pass takes the previous scheduler + extender Service shape to the new one",
          "[operator][reconcile]") {
  Fixture f;
  f.cluster.AddNode("trn-a", SampleNodeLabels());
  const json created = f.cluster.CreateSample(kSample);
  const k8s::ResourceRef rbac_role{"rbac.authorization.k8s.io", "v1", "roles", true};
  const k8s::ResourceRef rbac_binding{"rbac.authorization.k8s.io", "v1", "rolebindings", true};
  const k8s::ResourceRef cluster_role{"rbac.authorization.k8s.io", "v1", "clusterroles", false};
  const k8s::ResourceRef cluster_binding{"rbac.authorization.k8s.io", "v1", "clusterrolebindings",
                                         false};
  const std::map<std::string, k8s::ResourceRef> refs = {
      {"ServiceAccount", {"", "v1", "serviceaccounts", true}},
      {"Service", k8s::resources::kServices},
      {"ConfigMap", k8s::resources::kConfigMaps},
      {"Deployment", k8s::resources::kDeployments},
      {"Role", rbac_role},
      {"RoleBinding", rbac_binding},
      {"ClusterRole", cluster_role},
      {"ClusterRoleBinding", cluster_binding}};
  auto path = [&](const std::string& kind, const std::string& name) {
    const k8s::ResourceRef& ref = refs.at(kind);
    return k8s::ResourcePath(ref, ref.namespaced ? kNs : "", name);
  };
  int applied = 0;
  for (json obj :
       LoadYaml("tests/operator/testdata/previous-scheduler-with-extender-service.yaml")) {
    if (obj.is_null()) continue;
    if (obj["metadata"].contains("ownerReferences")) {
      obj["metadata"]["ownerReferences"][0]["uid"] = created["metadata"]["uid"];
    }
    const k8s::ResourceRef& ref = refs.at(obj["kind"].get<std::string>());
    auto r = f.cluster.client->Apply(ref, ref.namespaced ? kNs : "", obj, "neuron-operator",
                                     /*force=*/true);
    CAPTURE(obj["kind"], obj["metadata"]["name"], r.status().ToString());
    REQUIRE(r.ok());
    ++applied;
  }
  REQUIRE(applied == 12);
  const std::vector<std::string> old_only = {
      path("Deployment", "neuron-custom-scheduler-extension"),
      path("Service", "neuron-custom-scheduler-extension"),
      path("ServiceAccount", "neuron-custom-scheduler-extension"),
      path("ClusterRole", "aws-neuron-operator-neuron-scheduler-extension"),
      path("ClusterRoleBinding", "aws-neuron-operator-neuron-scheduler-extension")};
  for (const std::string& p : old_only) REQUIRE_FALSE(f.cluster.server.Get(p).is_null());
  const json old_config =
      f.cluster.server.Get(path("ConfigMap", "neuron-scheduler-config"))["data"];
  REQUIRE(old_config.dump().find(".svc:12345") != std::string::npos);

  f.Pass();
  for (const std::string& p : old_only) {
    CAPTURE(p);
    CHECK(f.cluster.server.Get(p).is_null());
  }
  // Every child of the new shape is there as render says, over the old objects of its name.
  const std::vector<Child> want = f.Desired();
  for (const Child& c : want) {
    CAPTURE(Path(c));
    CHECK(Contains(f.cluster.server.Get(Path(c)), c.object));
  }
  const json sched = f.cluster.server.Get(path("Deployment", "neuron-custom-scheduler"));
  CHECK(sched["spec"]["replicas"] == 2);
  REQUIRE(sched["spec"]["template"]["spec"]["containers"].size() == 2);
  CHECK(sched["spec"]["template"]["spec"]["containers"][1]["name"] == "extender");
  const json config = f.cluster.server.Get(path("ConfigMap", "neuron-scheduler-config"))["data"];
  CHECK(config.dump().find("urlPrefix: http://127.0.0.1:12345") != std::string::npos);
  // Nothing owned by the DeviceConfig is left that render does not produce.
  auto apis = f.reconciler->DiscoverApis();
  REQUIRE(apis.ok());
  for (const k8s::ResourceRef& ref : ChildKinds(*apis)) {
    auto list = f.cluster.client->ListAll(ref, ref.namespaced ? kNs : "",
                                          {std::string(kOwnerLabel) + "=" + kNs + ".neuron"});
    REQUIRE(list.ok());
    for (const json& item : list->items) {
      const std::string name = item["metadata"]["name"];
      CAPTURE(ref.resource, name);
      CHECK(std::any_of(want.begin(), want.end(), [&](const Child& c) {
        return c.ref.resource == ref.resource && c.object["metadata"]["name"] == name;
      }));
    }
  }
}

TEST_CASE("deletion removes children in stages and only then the finalizer",
          "[operator][reconcile]") {
  Fixture f;
  f.cluster.AddNode("trn-a", SampleNodeLabels());
  f.cluster.CreateSample(kSample);
  f.Pass();
  const std::string ns = kNs;
  const std::string metrics = "/apis/apps/v1/namespaces/" + ns + "/daemonsets/neuron-node-metrics";
  const std::string module = "/apis/kmm.sigs.x-k8s.io/v1beta1/namespaces/" + ns + "/modules/neuron";
  // A finalizer on the node agent's DaemonSet stands for its pods still terminating.
  json held = f.cluster.server.Get(metrics);
  held["metadata"]["finalizers"] = {"test.k8s.aws/pods-terminating"};
  REQUIRE(f.cluster.server.Put(metrics, held).ok());

  REQUIRE(f.cluster.client->Delete(DeviceConfigRef(), kNs, "neuron").ok());
  ReconcileResult r = f.Pass();
  CHECK(r.requeue_after.has_value());
  CHECK(f.cluster.server.Get(metrics)["metadata"].contains("deletionTimestamp"));
  CHECK(!f.cluster.server.Get(module).is_null());  // the driver waits for the plugin + metrics
  CHECK(!f.cluster.GetDc("neuron").is_null());

  held = f.cluster.server.Get(metrics);
  held["metadata"].erase("finalizers");
  REQUIRE(f.cluster.server.Put(metrics, held).ok());
  for (int i = 0; i < 5 && !f.cluster.GetDc("neuron").is_null(); ++i) f.Pass();
  CHECK(f.cluster.server.Get(module).is_null());
  CHECK(f.cluster.GetDc("neuron").is_null());  // finalizer dropped -> gone
  // Cluster-scoped children (no ownerReference possible) are gone too.
  auto rules =
      f.cluster.client->ListAll({"nfd.k8s-sigs.io", "v1alpha1", "nodefeaturerules", false}, "");
  REQUIRE(rules.ok());
  CHECK(rules->items.empty());
  auto roles = f.cluster.client->ListAll({"rbac.authorization.k8s.io", "v1", "clusterroles", false},
                                         "", {std::string(kOwnerLabel) + "=" + ns + ".neuron"});
  REQUIRE(roles.ok());
  CHECK(roles->items.empty());
}

TEST_CASE("without KMM the driver condition says what to do; preinstalled needs no KMM",
          "[operator][reconcile]") {
  Fixture f({"nfd"});
  f.cluster.AddNode("trn-a", SampleNodeLabels());
  f.cluster.CreateSample(kSample);
  f.Pass();
  json dc = f.cluster.GetDc("neuron");
  CHECK(CondReason(dc, "DriverReady") == "KMMNotInstalled");
  CHECK(CondMessage(dc, "DriverReady").find("driverMode: preinstalled") != std::string::npos);
  // The rest is applied all the same.
  CHECK(!f.cluster.server
             .Get("/apis/apps/v1/namespaces/aws-neuron-operator/daemonsets/neuron-node-metrics")
             .is_null());

  json patch = {{"spec", {{"driverMode", "preinstalled"}}}};
  REQUIRE(f.cluster.client->Patch(DeviceConfigRef(), kNs, "neuron", k8s::PatchType::kMerge, patch)
              .ok());
  f.Pass();
  dc = f.cluster.GetDc("neuron");
  CHECK(CondReason(dc, "DriverReady") == "Preinstalled");
  CHECK(CondStatus(dc, "DriverReady") == "True");
  CHECK(!f.cluster.server
             .Get("/apis/apps/v1/namespaces/aws-neuron-operator/daemonsets/neuron-device-plugin")
             .is_null());
}

TEST_CASE("without NFD the DeviceConfig is Degraded with a reason, not failing",
          "[operator][reconcile]") {
  Fixture f({"kmm"});
  f.cluster.AddNode("trn-a", SampleNodeLabels());
  f.cluster.CreateSample(kSample);
  f.Pass();
  const json dc = f.cluster.GetDc("neuron");
  CHECK(CondStatus(dc, "Degraded") == "True");
  CHECK(CondReason(dc, "Degraded") == "OptionalApiMissing");
  CHECK(CondMessage(dc, "Degraded").find("NFD") != std::string::npos);
}

TEST_CASE("an emulated stack needs no NFD, no KMM Module, and says it is emulated",
          "[operator][reconcile]") {
  Fixture f({"kmm"});
  f.cluster.AddNode("kind-worker", {{"kubernetes.io/os", "linux"}});
  f.cluster.CreateSample("deploy/operator/samples/deviceconfig-emulated.yaml");
  f.Pass();
  const json dc = f.cluster.GetDc("neuron");
  CHECK(CondStatus(dc, "Emulated") == "True");
  CHECK(CondReason(dc, "DriverReady") == "Emulated");
  CHECK(CondStatus(dc, "Degraded") != "True");
  CHECK(f.cluster.server
            .Get("/apis/kmm.sigs.x-k8s.io/v1beta1/namespaces/aws-neuron-operator/"
                 "modules/neuron")
            .is_null());
  const json ds = f.cluster.server.Get(
      "/apis/apps/v1/namespaces/aws-neuron-operator/daemonsets/neuron-device-plugin");
  REQUIRE_FALSE(ds.is_null());
  CHECK(ds.dump().find("--emulate=trn1.32xlarge") != std::string::npos);
}

TEST_CASE("the later of two overlapping DeviceConfigs is Degraded and applies nothing",
          "[operator][reconcile]") {
  Fixture f;
  f.cluster.AddNode("trn-a", SampleNodeLabels());
  // Stored with the creation times a real apiserver would have stamped a second apart
  // (creationTimestamp has one-second resolution), instead of waiting a second between creates.
  std::stringstream ndjson;
  for (const auto& [name, created] :
       {std::pair{"first", "2026-01-01T00:00:00Z"}, std::pair{"second", "2026-01-01T00:00:01Z"}}) {
    json dc = LoadYaml(kSample).front();
    dc["metadata"]["name"] = name;
    dc["metadata"]["namespace"] = kNs;
    dc["metadata"]["creationTimestamp"] = created;
    ndjson << dc.dump() << "\n";
  }
  REQUIRE(f.cluster.server.Preload(ndjson).ok());
  f.Pass("second");
  f.Pass("first");
  const json second = f.cluster.GetDc("second");
  CHECK(CondReason(second, "Degraded") == "SelectorOverlap");
  CHECK(CondMessage(second, "Degraded").find("aws-neuron-operator/first") != std::string::npos);
  CHECK(f.cluster.server
            .Get("/apis/apps/v1/namespaces/aws-neuron-operator/daemonsets/second-node-metrics")
            .is_null());
  CHECK(CondReason(f.cluster.GetDc("first"), "Degraded") != "SelectorOverlap");
  CHECK(!f.cluster.server
             .Get("/apis/apps/v1/namespaces/aws-neuron-operator/daemonsets/first-node-metrics")
             .is_null());
}

TEST_CASE("an invalid spec is a condition naming the field, and nothing is applied",
          "[operator][reconcile]") {
  Fixture f;
  json dc = LoadYaml(kSample).front();
  dc["metadata"]["namespace"] = kNs;
  dc["spec"]["driverMode"] = "sideways";
  REQUIRE(f.cluster.client->Create(DeviceConfigRef(), kNs, dc).ok());
  f.Pass();
  const json got = f.cluster.GetDc("neuron");
  CHECK(CondReason(got, "Ready") == "InvalidSpec");
  CHECK(CondMessage(got, "Ready").find("spec.driverMode") != std::string::npos);
  for (const char* kind : {"daemonsets", "deployments"}) {
    auto l = f.cluster.client->ListAll({"apps", "v1", kind, true}, kNs);
    REQUIRE(l.ok());
    CHECK(l->items.empty());
  }
}

TEST_CASE("API errors fail the pass; the retry converges without duplicates",
          "[operator][reconcile]") {
  Fixture f;
  f.cluster.AddNode("trn-a", SampleNodeLabels());
  f.cluster.CreateSample(kSample);
  f.cluster.server.InjectError("PATCH", "/daemonsets/", 503, 1);
  CHECK_FALSE(f.reconciler->Reconcile(kNs, "neuron").ok());
  f.cluster.server.InjectError("PATCH", "/deviceconfigs/neuron/status", 409, 1);
  CHECK_FALSE(f.reconciler->Reconcile(kNs, "neuron").ok());
  f.Pass();
  auto l = f.cluster.client->ListAll(k8s::resources::kDaemonSets, kNs);
  REQUIRE(l.ok());
  std::set<std::string> names;
  for (const json& d : l->items) names.insert(d["metadata"]["name"].get<std::string>());
  CHECK(names.size() == l->items.size());
  CHECK(names.count("neuron-node-metrics") == 1);
  CHECK(!f.cluster.GetDc("neuron")["status"].is_null());
}

TEST_CASE("a refused apply is Degraded in status before the pass fails", "[operator][reconcile]") {
  Fixture f;
  f.cluster.AddNode("trn-a", SampleNodeLabels());
  f.cluster.CreateSample(kSample);
  f.Pass();
  ReportAllReady(f.cluster, 1);
  f.Pass();
  REQUIRE(CondStatus(f.cluster.GetDc("neuron"), "Ready") == "True");

  // The server refuses a child (422): Ready=True must not outlive it, and the error is terminal.
  f.cluster.server.InjectError("PATCH", "/daemonsets/", 422, 1);
  auto refused = f.reconciler->Reconcile(kNs, "neuron");
  REQUIRE_FALSE(refused.ok());
  CHECK(k8s::IsTerminal(refused.status()));
  json dc = f.cluster.GetDc("neuron");
  CHECK(CondStatus(dc, "Ready") == "False");
  CHECK(CondReason(dc, "Degraded") == "ApplyRejected");
  CHECK(CondMessage(dc, "Degraded").find("DaemonSet") != std::string::npos);
  CHECK(dc["status"]["observedGeneration"] == dc["metadata"]["generation"]);

  // An outage (503) is retried with backoff, and says so meanwhile.
  f.cluster.server.InjectError("PATCH", "/daemonsets/", 503, 1);
  auto outage = f.reconciler->Reconcile(kNs, "neuron");
  REQUIRE_FALSE(outage.ok());
  CHECK_FALSE(k8s::IsTerminal(outage.status()));
  CHECK(CondReason(f.cluster.GetDc("neuron"), "Degraded") == "ApplyFailed");

  // The next good pass clears it.
  f.Pass();
  dc = f.cluster.GetDc("neuron");
  CHECK(CondStatus(dc, "Degraded") == "False");
  CHECK(CondStatus(dc, "Ready") == "True");
}

}  // namespace
}  // namespace neuron::op
