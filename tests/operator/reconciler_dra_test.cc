// File: tests/operator/reconciler_dra_test.cc
// DRA allocation against the fake kube-apiserver: DeviceClasses written at the
// resource.k8s.io version discovery finds (v1, else v1beta1), DRA refused with a condition
// when neither is served, status following the DRA DaemonSet's rollout (per side in mixed
// pools), and a switch back to the device plugin pruning the DRA objects.
#include <string>

#include "lib/operator/reconciler.h"
#include "tests/operator/operator_test_util.h"

namespace neuron::op {
namespace {

using nlohmann::json;
using namespace testutil;  // NOLINT(google-build-using-namespace): test helpers

const std::string kApps = std::string("/apis/apps/v1/namespaces/") + kNs;

json NodeLabels(bool dra) {
  json labels = LoadYaml(kSample).front()["spec"].value("selector", json::object());
  labels["node.kubernetes.io/instance-type"] = "trn2.48xlarge";
  if (dra) labels["neuron.aws.com/allocation"] = "dra";
  return labels;
}

struct DraFixture {
  DraFixture() {
    settings.ns = kNs;
    reconciler =
        std::make_unique<Reconciler>(*cluster.client, settings, ListNodes(*cluster.client));
  }
  // The v1beta1 sample with `allocation` (dra: without extender and second scheduler).
  void Create(const std::string& allocation) {
    json dc = LoadYaml(kSample).front();
    dc["metadata"]["namespace"] = kNs;
    dc["spec"]["allocation"] = allocation;
    if (allocation == "dra") dc["spec"].erase("schedulerExtensionImage");
    auto r = cluster.client->Create(DeviceConfigRef(), kNs, dc);
    CAPTURE(r.status().ToString());
    REQUIRE(r.ok());
  }
  ReconcileResult Pass() {
    auto r = reconciler->Reconcile(kNs, "neuron");
    CAPTURE(r.status().ToString());
    REQUIRE(r.ok());
    return *r;
  }
  // A DaemonSet's controller reporting `n` current pods available.
  void DaemonSetReady(const std::string& name, int n) {
    const std::string path = kApps + "/daemonsets/" + name;
    cluster.SetStatus(path,
                      {{"observedGeneration", cluster.server.Get(path)["metadata"]["generation"]},
                       {"desiredNumberScheduled", n},
                       {"updatedNumberScheduled", n},
                       {"numberAvailable", n}});
  }
  void ModuleLoaded(int n) {
    const json counts = {
        {"nodesMatchingSelectorNumber", n}, {"desiredNumber", n}, {"availableNumber", n}};
    cluster.SetStatus(
        std::string("/apis/kmm.sigs.x-k8s.io/v1beta1/namespaces/") + kNs + "/modules/neuron",
        {{"moduleLoader", counts}});
  }
  Cluster cluster;
  OperatorSettings settings;
  std::unique_ptr<Reconciler> reconciler;
};

TEST_CASE("allocation dra: our driver, DeviceClass at v1, status from its rollout",
          "[operator][reconcile][dra]") {
  DraFixture f;
  f.cluster.AddNode("trn-a", NodeLabels(false));
  f.Create("dra");
  f.Pass();
  const json cls = f.cluster.server.Get("/apis/resource.k8s.io/v1/deviceclasses/neuron.aws.com");
  REQUIRE_FALSE(cls.is_null());
  CHECK(cls["apiVersion"] == "resource.k8s.io/v1");
  CHECK(cls["metadata"]["labels"][kOwnerLabel] == std::string(kNs) + ".neuron");
  CHECK_FALSE(f.cluster.server.Get(kApps + "/daemonsets/neuron-dra-driver").is_null());
  CHECK_FALSE(f.cluster.server.Get(kApps + "/daemonsets/neuron-node-metrics").is_null());
  CHECK(f.cluster.server.Get(kApps + "/daemonsets/neuron-device-plugin").is_null());
  CHECK(f.cluster.server.Get(kApps + "/deployments/neuron-custom-scheduler").is_null());

  json dc = f.cluster.GetDc("neuron");
  CHECK(CondStatus(dc, kDraDriverCondition) == "False");
  CHECK(CondStatus(dc, "SchedulerReady") == "True");  // kube-scheduler's DRA allocator
  CHECK(dc["status"]["schedulerSummary"] == "DRA");

  f.ModuleLoaded(1);
  f.DaemonSetReady("neuron-dra-driver", 1);
  f.DaemonSetReady("neuron-node-metrics", 1);
  f.Pass();
  dc = f.cluster.GetDc("neuron");
  CAPTURE(dc["status"].dump(2));
  CHECK(CondStatus(dc, kDraDriverCondition) == "True");
  CHECK(CondStatus(dc, "DevicePluginReady") == "True");  // the DRA driver plays its part
  CHECK(CondStatus(dc, "Ready") == "True");
  CHECK(dc["status"]["draDriverSummary"] == "1/1");
  CHECK(dc["status"]["draDriver"]["nodesMatchingSelectorNumber"] == 1);

  // Back to the device plugin: the DRA objects are pruned, the condition goes.
  json obj = f.cluster.GetDc("neuron");
  obj["spec"]["allocation"] = "devicePlugin";
  obj["spec"]["schedulerExtensionImage"] = "public.ecr.aws/neuron/neuron-scheduler:2.22.4.0";
  REQUIRE(f.cluster.server
              .Put(std::string("/apis/k8s.aws/v1beta1/namespaces/") + kNs + "/deviceconfigs/neuron",
                   obj)
              .ok());
  f.Pass();
  const json gone = f.cluster.server.Get("/apis/resource.k8s.io/v1/deviceclasses/neuron.aws.com");
  CHECK((gone.is_null() || gone["metadata"].contains("deletionTimestamp")));
  const json ds = f.cluster.server.Get(kApps + "/daemonsets/neuron-dra-driver");
  CHECK((ds.is_null() || ds["metadata"].contains("deletionTimestamp")));
  dc = f.cluster.GetDc("neuron");
  CHECK(CondStatus(dc, kDraDriverCondition).empty());
  CHECK_FALSE(dc["status"].contains("draDriver"));
}

TEST_CASE("DeviceClasses at v1beta1 where v1 is not served", "[operator][reconcile][dra]") {
  DraFixture f;
  f.cluster.server.DisableGroupVersion("resource.k8s.io/v1");
  f.cluster.AddNode("trn-a", NodeLabels(false));
  f.Create("dra");
  auto apis = f.reconciler->DiscoverApis();
  REQUIRE(apis.ok());
  CHECK(apis->dra_version == "v1beta1");
  f.Pass();
  const json cls =
      f.cluster.server.Get("/apis/resource.k8s.io/v1beta1/deviceclasses/neuron.aws.com");
  REQUIRE_FALSE(cls.is_null());
  CHECK(cls["apiVersion"] == "resource.k8s.io/v1beta1");
  CHECK(CondReason(f.cluster.GetDc("neuron"), "Degraded") != "DRANotServed");
}

TEST_CASE("no resource.k8s.io: DRA is refused with a condition, not retried",
          "[operator][reconcile][dra]") {
  for (const char* name : {"dra", "mixed"}) {
    const std::string allocation = name;
    DraFixture f;
    f.cluster.server.DisableGroupVersion("resource.k8s.io/v1");
    f.cluster.server.DisableGroupVersion("resource.k8s.io/v1beta1");
    f.cluster.AddNode("trn-a", NodeLabels(false));
    f.Create(allocation);
    auto apis = f.reconciler->DiscoverApis();
    REQUIRE(apis.ok());
    CHECK_FALSE(apis->DraServed());
    const ReconcileResult r = f.Pass();  // no error: nothing to retry until the API appears
    CHECK_FALSE(r.requeue_after.has_value());
    const json dc = f.cluster.GetDc("neuron");
    CAPTURE(allocation, dc["status"].dump(2));
    CHECK(CondStatus(dc, "Ready") == "False");
    CHECK(CondReason(dc, "Ready") == "DRANotServed");
    CHECK(CondStatus(dc, "Degraded") == "True");
    CHECK(CondMessage(dc, "Degraded").find("allocation " + allocation) != std::string::npos);
    CHECK(CondMessage(dc, "Degraded").find("resource.k8s.io") != std::string::npos);
    CHECK(CondStatus(dc, kDraDriverCondition) == "Unknown");
    CHECK(f.cluster.server.Get(kApps + "/daemonsets/neuron-dra-driver").is_null());
  }
}

TEST_CASE("mixed pools: each side's status counts its own nodes", "[operator][reconcile][dra]") {
  DraFixture f;
  f.cluster.AddNode("trn-a", NodeLabels(true));
  f.cluster.AddNode("trn-b", NodeLabels(false));
  f.cluster.AddNode("trn-c", NodeLabels(false));
  f.Create("mixed");
  f.Pass();
  for (const char* ds : {"neuron-device-plugin", "neuron-dra-driver", "neuron-node-metrics"}) {
    CAPTURE(ds);
    REQUIRE_FALSE(f.cluster.server.Get(kApps + "/daemonsets/" + ds).is_null());
  }
  f.ModuleLoaded(3);
  f.DaemonSetReady("neuron-device-plugin", 2);
  f.DaemonSetReady("neuron-dra-driver", 1);
  f.DaemonSetReady("neuron-node-metrics", 3);
  const std::string sched = kApps + "/deployments/neuron-custom-scheduler";  // with its extender
  f.cluster.SetStatus(
      sched, {{"observedGeneration", f.cluster.server.Get(sched)["metadata"]["generation"]},
              {"updatedReplicas", 2},
              {"availableReplicas", 2}});
  f.Pass();
  json dc = f.cluster.GetDc("neuron");
  CAPTURE(dc["status"].dump(2));
  CHECK(CondStatus(dc, "Ready") == "True");
  CHECK(dc["status"]["devicePlugin"]["nodesMatchingSelectorNumber"] == 2);
  CHECK(dc["status"]["draDriver"]["nodesMatchingSelectorNumber"] == 1);
  CHECK(dc["status"]["draDriverSummary"] == "1/1");
  CHECK(dc["status"]["devicePluginSummary"] == "2/2");

  // The DRA side rolling out again (a new pod not yet available) is not ready.
  f.cluster.SetStatus(kApps + "/daemonsets/neuron-dra-driver", {{"observedGeneration", 1},
                                                                {"desiredNumberScheduled", 1},
                                                                {"updatedNumberScheduled", 1},
                                                                {"numberAvailable", 0}});
  f.Pass();
  dc = f.cluster.GetDc("neuron");
  CHECK(CondStatus(dc, kDraDriverCondition) == "False");
  CHECK(CondReason(dc, kDraDriverCondition) == "Progressing");
  CHECK(CondStatus(dc, "DevicePluginReady") == "True");
  CHECK(CondStatus(dc, "Ready") == "False");
}

}  // namespace
}  // namespace neuron::op
