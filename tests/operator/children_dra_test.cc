// File: tests/operator/children_dra_test.cc
// Our DRA driver as the operator deploys it (allocation dra and mixed): the DaemonSet's flags,
// environment, mounts and probes; its RBAC, exactly; the DeviceClasses at the version
// discovery found, as deploy/dra writes them; mixed pools split by the node label; the node
// agent kept in every mode.
#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "lib/base/json_access.h"
#include "lib/operator/children.h"
#include "tests/operator/children_test_util.h"

namespace neuron::op {
namespace {

using childtest::Find;
using childtest::PodSpec;
using childtest::Sample;
using nlohmann::json;

DeviceConfig Ours(Allocation a) {
  DeviceConfig dc = Sample();
  dc.spec.allocation = a;
  dc.spec.allocation_set = true;
  if (a == Allocation::kDra) {
    dc.spec.custom_scheduler_image.clear();
    dc.spec.scheduler_extension_image.clear();
  }
  REQUIRE(ValidateDeviceConfig(dc).empty());
  return dc;
}

ClusterApis Served(const std::string& version) {
  ClusterApis apis;
  apis.dra_version = version;
  return apis;
}

json MountFor(const json& ctr, const std::string& name) {
  for (const json& m : ctr["volumeMounts"]) {
    if (m["name"] == name) return m;
  }
  return nullptr;
}

json VolumeFor(const json& pod, const std::string& name) {
  for (const json& v : pod["volumes"]) {
    if (v["name"] == name) return v;
  }
  return nullptr;
}

TEST_CASE("our DRA driver: devicePluginImage run with --api=dra", "[operator][children][dra]") {
  DeviceConfig dc = Ours(Allocation::kDra);
  dc.spec.dra = {true, true, false};
  dc.spec.compile_cache.enabled = false;  // the cache's additions: the next test case
  const std::vector<Child> children = DesiredChildren(dc, Served("v1"), {});
  const json& pod = PodSpec(Find(children, "DaemonSet", "neuron-dra-driver"));
  CHECK(pod["serviceAccountName"] == "neuron-dra-driver");
  CHECK(pod["priorityClassName"] == "system-node-critical");
  CHECK_FALSE(pod.contains("hostNetwork"));  // probes reach the pod's own address
  REQUIRE(pod["containers"].size() == 1);
  const json& ctr = pod["containers"][0];
  CHECK(ctr["image"] == dc.spec.device_plugin_image);
  CHECK(ctr["command"] == json{"/usr/local/bin/neuron-device-plugin"});
  CHECK(ctr["args"] == json{"--api=dra", "--host-root=/host",
                            "--kubelet-registrar-dir=/var/lib/kubelet/plugins_registry",
                            "--kubelet-plugins-dir=/var/lib/kubelet/plugins",
                            "--cdi-root=/var/run/cdi",
                            "--dra-state-dir=/var/lib/kubelet/plugins/neuron.aws.com",
                            "--metrics-listen=0.0.0.0:2112", "--dra-partitionable-devices=true",
                            "--dra-device-taints=true"});
  CHECK(ctr["env"] ==
        json::array({{{"name", "NODE_NAME"},
                      {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}}}));
  // Every directory a flag names is mounted at that path from the same host path.
  for (const auto& [name, path, type] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"plugins-registry", "/var/lib/kubelet/plugins_registry", "Directory"},
           {"plugins", "/var/lib/kubelet/plugins", "Directory"},
           {"cdi", "/var/run/cdi", "DirectoryOrCreate"}}) {
    CAPTURE(name);
    CHECK(MountFor(ctr, name) == json{{"name", name}, {"mountPath", path}});
    CHECK(VolumeFor(pod, name) ==
          json{{"name", name}, {"hostPath", {{"path", path}, {"type", type}}}});
  }
  // As the device plugin: the host's sysfs and /dev under --host-root, read-only.
  CHECK(MountFor(ctr, "host-sys") ==
        json{{"name", "host-sys"}, {"mountPath", "/host/sys"}, {"readOnly", true}});
  CHECK(MountFor(ctr, "host-dev") ==
        json{{"name", "host-dev"}, {"mountPath", "/host/dev"}, {"readOnly", true}});
  CHECK(VolumeFor(pod, "host-dev")["hostPath"]["path"] == "/dev");
  CHECK(VolumeFor(pod, "host-sys")["hostPath"]["path"] == "/sys");
  CHECK_FALSE(MountFor(ctr, "host-neuron-opt").is_null());
  CHECK(ctr["ports"] ==
        json::array({{{"name", "metrics"}, {"containerPort", 2112}, {"protocol", "TCP"}}}));
  CHECK(ctr["livenessProbe"]["httpGet"] == json{{"path", "/healthz"}, {"port", "metrics"}});
  CHECK(ctr["readinessProbe"]["httpGet"] == json{{"path", "/readyz"}, {"port", "metrics"}});
  CHECK(ctr["securityContext"]["readOnlyRootFilesystem"] == true);
  CHECK_FALSE(ctr["securityContext"].value("privileged", false));

  dc.spec.dra = {};  // the gates off: no flags (the binary's defaults)
  const std::vector<Child> plain = DesiredChildren(dc, Served("v1"), {});
  CHECK(PodSpec(Find(plain, "DaemonSet", "neuron-dra-driver"))["containers"][0]["args"].size() ==
        7);
}

TEST_CASE("with compile caches, our DRA driver makes claims' views in the agent's cache dir",
          "[operator][children][dra][cache]") {
  DeviceConfig dc = Ours(Allocation::kDra);
  dc.spec.compile_cache.host_path = "/data/neuron-cache";
  const std::vector<Child> children = DesiredChildren(dc, Served("v1"), {});
  const json& pod = PodSpec(Find(children, "DaemonSet", "neuron-dra-driver"));
  const json& ctr = pod["containers"][0];
  CHECK(ctr["args"].back() == "--cache-dir=/data/neuron-cache");
  // The overlay view is mounted from the container and must reach the host's runtime.
  CHECK(ctr["securityContext"]["privileged"] == true);
  CHECK(MountFor(ctr, "cache-dir") == json{{"name", "cache-dir"},
                                           {"mountPath", "/data/neuron-cache"},
                                           {"mountPropagation", "Bidirectional"}});
  CHECK(VolumeFor(pod, "cache-dir")["hostPath"] ==
        json{{"path", "/data/neuron-cache"}, {"type", "DirectoryOrCreate"}});
}

TEST_CASE("our DRA driver's RBAC is exactly what its kubelet plugin calls",
          "[operator][children][dra]") {
  const std::vector<Child> children = DesiredChildren(Ours(Allocation::kDra), Served("v1"), {});
  const json* role = Find(children, "ClusterRole", "aws-neuron-operator-neuron-dra-driver");
  REQUIRE(role != nullptr);
  CHECK(role->at("rules") ==
        json::array({{{"apiGroups", {"resource.k8s.io"}},
                      {"resources", {"resourceslices"}},
                      {"verbs", {"get", "list", "watch", "create", "update", "patch", "delete"}}},
                     {{"apiGroups", {"resource.k8s.io"}},
                      {"resources", {"resourceclaims"}},
                      {"verbs", {"get"}}},
                     {{"apiGroups", {""}}, {"resources", {"nodes"}}, {"verbs", {"get", "list"}}},
                     {{"apiGroups", {""}}, {"resources", {"events"}}, {"verbs", {"create"}}}}));
  const json* binding =
      Find(children, "ClusterRoleBinding", "aws-neuron-operator-neuron-dra-driver");
  REQUIRE(binding != nullptr);
  CHECK(binding->at("subjects")[0]["name"] == "neuron-dra-driver");
  // The Role/ClusterRole the device plugin would use is not there in pure DRA.
  CHECK(Find(children, "ClusterRole", "aws-neuron-operator-neuron-device-plugin") == nullptr);
}

TEST_CASE("DeviceClasses follow the served resource.k8s.io version and the spec",
          "[operator][children][dra]") {
  DeviceConfig dc = Ours(Allocation::kDra);
  auto classes = [&](const std::string& version) {
    std::vector<std::string> out;
    for (const Child& c : DesiredChildren(dc, Served(version), {})) {
      if (c.object["kind"] != "DeviceClass") continue;
      CHECK(c.object["apiVersion"] == "resource.k8s.io/" + version);
      CHECK(c.ref.GroupVersion() == "resource.k8s.io/" + version);
      CHECK(c.component == Component::kDra);
      out.push_back(c.object["metadata"]["name"]);
    }
    return out;
  };
  using Names = std::vector<std::string>;
  CHECK(classes("v1") == Names{"neuron.aws.com"});
  CHECK(classes("v1beta1") == Names{"neuron.aws.com"});
  CHECK(classes("") == Names{});  // the reconciler refuses the spec then
  dc.spec.dra.partitionable_devices = true;
  CHECK(classes("v1beta1") == Names{"neuron.aws.com", "neuroncore.aws.com"});
  dc.spec.dra.extended_resource = true;
  // extendedResourceName is a v1 field only.
  CHECK(classes("v1beta1") == Names{"neuron.aws.com", "neuroncore.aws.com"});
  CHECK(classes("v1") ==
        Names{"neuron.aws.com", "neuroncore.aws.com", "extended-resource.neuron.aws.com"});

  // The same specs as the hand-written ones in deploy/dra.
  const std::vector<Child> children = DesiredChildren(dc, Served("v1"), {});
  std::vector<json> deploy = childtest::LoadYaml("deploy/dra/deviceclass.yaml");
  for (const json& d : childtest::LoadYaml("deploy/dra/deviceclass-extended-resource.yaml")) {
    deploy.push_back(d);
  }
  REQUIRE(deploy.size() == 3);
  for (const json& d : deploy) {
    const json* ours = Find(children, "DeviceClass", d["metadata"]["name"]);
    CAPTURE(d["metadata"]["name"]);
    REQUIRE(ours != nullptr);
    CHECK(ours->at("spec") == d["spec"]);
    CHECK(ours->at("apiVersion") == d["apiVersion"]);
  }
  // Only our driver gets classes: AWS's mode and the device plugin leave them to others.
  for (const Child& c : DesiredChildren(Sample(), Served("v1"), {})) {
    CHECK(c.object["kind"] != "DeviceClass");
  }
}

// The nodeSelectorTerms of a pod's required node affinity (none: empty).
json Terms(const json& pod) {
  const json* t =
      MemberAt(pod, {"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                     "nodeSelectorTerms"});
  return t != nullptr ? *t : json::array();
}

bool EveryTermHas(const json& pod, const json& expr) {
  const json terms = Terms(pod);
  return !terms.empty() && std::all_of(terms.begin(), terms.end(), [&](const json& t) {
    const json& m = t["matchExpressions"];
    return std::find(m.begin(), m.end(), expr) != m.end();
  });
}

const json kAvoid = {
    {"key", "neuron.aws.com/allocation"}, {"operator", "NotIn"}, {"values", {"dra"}}};
const json kRequire = {
    {"key", "neuron.aws.com/allocation"}, {"operator", "In"}, {"values", {"dra"}}};

TEST_CASE("mixed pools: a node label sends a node to DRA or the device plugin",
          "[operator][children][dra]") {
  for (const DriverMode mode : {DriverMode::kKmm, DriverMode::kPreinstalled}) {
    for (const bool selector : {true, false}) {
      DeviceConfig dc = Ours(Allocation::kMixed);
      dc.spec.driver_mode = mode;
      if (!selector) dc.spec.selector.clear();
      CAPTURE(mode == DriverMode::kKmm, selector);
      const std::vector<Child> children = DesiredChildren(dc, Served("v1"), {});
      const json& plugin = PodSpec(Find(children, "DaemonSet", "neuron-device-plugin"));
      const json& dra = PodSpec(Find(children, "DaemonSet", "neuron-dra-driver"));
      CHECK(EveryTermHas(plugin, kAvoid));
      CHECK(EveryTermHas(dra, kRequire));
      CHECK_FALSE(EveryTermHas(plugin, kRequire));
      // Both keep the placement of their mode: KMM's ready label, or the Neuron nodes.
      CHECK(plugin.value("nodeSelector", json()) == dra.value("nodeSelector", json()));
      if (mode == DriverMode::kKmm) {
        CHECK(plugin["nodeSelector"].contains(
            "kmm.node.kubernetes.io/aws-neuron-operator.neuron.ready"));
        // The Module only loads the driver: the plugin is the DaemonSet above.
        const json* module = Find(children, "Module", "neuron");
        REQUIRE(module != nullptr);
        CHECK_FALSE(module->at("spec").contains("devicePlugin"));
      } else if (!selector) {
        CHECK(Terms(plugin).size() == 5);  // deploy/'s five ORed ways to spot a Neuron node
      }
      // The extender stays for device-plugin nodes; the node agent runs everywhere.
      CHECK(childtest::RunsExtender(children));
      CHECK(Find(children, "DaemonSet", "neuron-node-metrics") != nullptr);
    }
  }
  // Pure DRA: on every selected node, no label needed, no plugin, no extender.
  const std::vector<Child> pure = DesiredChildren(Ours(Allocation::kDra), Served("v1"), {});
  CHECK(Terms(PodSpec(Find(pure, "DaemonSet", "neuron-dra-driver"))).empty());
  CHECK(Find(pure, "DaemonSet", "neuron-device-plugin") == nullptr);
  CHECK_FALSE(childtest::RunsExtender(pure));
  CHECK(Find(pure, "Deployment", "neuron-custom-scheduler") == nullptr);
  const json* module = Find(pure, "Module", "neuron");
  REQUIRE(module != nullptr);
  CHECK_FALSE(module->at("spec").contains("devicePlugin"));
}

TEST_CASE("the node agent runs in every allocation mode", "[operator][children][dra]") {
  DeviceConfig aws = Sample();
  aws.spec.dra_driver_image = "public.ecr.aws/neuron/neuron-dra-driver:1.0.1";
  aws.spec.device_plugin_image.clear();
  aws.spec.custom_scheduler_image.clear();
  aws.spec.scheduler_extension_image.clear();
  for (const DeviceConfig& dc : {Sample(), aws, Ours(Allocation::kDra), Ours(Allocation::kMixed)}) {
    for (const char* version : {"v1", "v1beta1"}) {
      const std::vector<Child> children = DesiredChildren(dc, Served(version), {});
      const json* agent = Find(children, "DaemonSet", "neuron-node-metrics");
      REQUIRE(agent != nullptr);
      CHECK(Find(children, "Service", "neuron-node-metrics") != nullptr);
      // Everywhere, DRA nodes included: its placement never names the allocation label.
      CHECK_FALSE(agent->dump().find("neuron.aws.com/allocation") != std::string::npos);
    }
  }
}

}  // namespace
}  // namespace neuron::op
