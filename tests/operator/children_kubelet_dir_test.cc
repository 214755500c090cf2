// File: tests/operator/children_kubelet_dir_test.cc
// spec.kubeletRootDir: on a node whose kubelet runs with another --root-dir (k0s, MicroK8s),
// every kubelet path a node pod is given (flags, env, mounts, hostPath volumes) is under it, and
// each is mounted at its host path (a DRA plugin registers its socket as a host path), except
// the device-plugin directory: the kubelet serves that at /var/lib/kubelet/device-plugins
// whatever its root (pluginapi.DevicePluginPath), so KMM's device plugin works with any root.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "lib/operator/children.h"
#include "tests/operator/children_test_util.h"

namespace neuron::op {
namespace {

using childtest::Find;
using childtest::PodSpec;
using childtest::Sample;
using nlohmann::json;

constexpr char kRoot[] = "/var/lib/k0s/kubelet";

// Every string anywhere in `j`.
void Strings(const json& j, std::vector<std::string>& out) {
  if (j.is_string()) {
    out.push_back(j.get<std::string>());
  } else if (j.is_structured()) {
    for (const json& v : j) Strings(v, out);
  }
}

constexpr char kFixedPluginDir[] = "/var/lib/kubelet/device-plugins";

// Checks the pod's kubelet paths: none under the default root but the fixed device-plugin
// directory, `want` among them, and every mount of a kubelet directory at the same path as its
// host volume.
void CheckPod(const json& pod, const std::vector<std::string>& want) {
  std::vector<std::string> all;
  Strings(pod, all);
  for (const std::string& s : all) {
    CAPTURE(s);
    if (absl::StrContains(s, kFixedPluginDir)) continue;
    CHECK_FALSE(absl::StrContains(s, "/var/lib/kubelet"));
  }
  for (const std::string& w : want) {
    CAPTURE(w);
    CHECK(std::find(all.begin(), all.end(), w) != all.end());
  }
  for (const json& v : pod["volumes"]) {
    const std::string host = v["hostPath"].value("path", "");
    if (!absl::StartsWith(host, kRoot)) continue;
    bool mounted_same = false;
    for (const json& ctr : pod["containers"]) {
      for (const json& m : ctr["volumeMounts"]) {
        if (m["name"] == v["name"]) mounted_same = m["mountPath"] == host;
      }
    }
    CAPTURE(host);
    CHECK(mounted_same);
  }
}

DeviceConfig Dra(Allocation a) {
  DeviceConfig dc = Sample();
  dc.spec.driver_mode = DriverMode::kPreinstalled;
  dc.spec.allocation = a;
  dc.spec.allocation_set = true;
  if (a == Allocation::kDra) {
    dc.spec.custom_scheduler_image.clear();
    dc.spec.scheduler_extension_image.clear();
  }
  dc.spec.kubelet_root_dir = kRoot;
  REQUIRE(ValidateDeviceConfig(dc).empty());
  return dc;
}

ClusterApis DraServed() {
  ClusterApis apis;
  apis.dra_version = "v1";
  return apis;
}

TEST_CASE("our DRA driver's sockets and checkpoint follow kubeletRootDir",
          "[operator][children][kubelet]") {
  const std::vector<Child> children = DesiredChildren(Dra(Allocation::kDra), DraServed(), {});
  const json& pod = PodSpec(Find(children, "DaemonSet", "neuron-dra-driver"));
  CheckPod(pod, {"--kubelet-registrar-dir=/var/lib/k0s/kubelet/plugins_registry",
                 "--kubelet-plugins-dir=/var/lib/k0s/kubelet/plugins",
                 "--dra-state-dir=/var/lib/k0s/kubelet/plugins/neuron.aws.com",
                 "/var/lib/k0s/kubelet/plugins_registry", "/var/lib/k0s/kubelet/plugins"});
}

TEST_CASE("the device plugin's PodResources socket follows kubeletRootDir, its own dir stays",
          "[operator][children][kubelet]") {
  for (Allocation a : {Allocation::kDevicePlugin, Allocation::kMixed}) {
    const std::vector<Child> children = DesiredChildren(Dra(a), DraServed(), {});
    const json& pod = PodSpec(Find(children, "DaemonSet", "neuron-device-plugin"));
    CheckPod(pod, {"--device-plugin-dir=/var/lib/kubelet/device-plugins",
                   "--pod-resources-socket=/var/lib/k0s/kubelet/pod-resources/kubelet.sock",
                   "/var/lib/k0s/kubelet/pod-resources"});
    bool fixed_volume = false;
    for (const json& v : pod["volumes"]) {
      fixed_volume |= v["name"] == "device-plugins" && v["hostPath"]["path"] == kFixedPluginDir;
    }
    CHECK(fixed_volume);
  }
}

TEST_CASE("the node agent asks the PodResources socket under kubeletRootDir, mounted",
          "[operator][children][kubelet]") {
  for (Allocation a : {Allocation::kDevicePlugin, Allocation::kDra}) {
    const std::vector<Child> children = DesiredChildren(Dra(a), DraServed(), {});
    const json& pod = PodSpec(Find(children, "DaemonSet", "neuron-node-metrics"));
    CheckPod(pod, {"--pod-resources-socket=/var/lib/k0s/kubelet/pod-resources/kubelet.sock",
                   "/var/lib/k0s/kubelet/pod-resources"});
  }
}

TEST_CASE("AWS's DRA driver is told the directories in its own environment variables",
          "[operator][children][kubelet]") {
  DeviceConfig dc = Sample();
  dc.spec.dra_driver_image = "public.ecr.aws/neuron/neuron-dra-driver:1.0.1";
  dc.spec.device_plugin_image.clear();
  dc.spec.custom_scheduler_image.clear();
  dc.spec.scheduler_extension_image.clear();
  dc.spec.kubelet_root_dir = kRoot;
  REQUIRE(ValidateDeviceConfig(dc).empty());
  const std::vector<Child> children = DesiredChildren(dc, DraServed(), {});
  const json& pod = PodSpec(Find(children, "DaemonSet", "neuron-dra-driver"));
  CheckPod(pod, {"/var/lib/k0s/kubelet/plugins_registry", "/var/lib/k0s/kubelet/plugins"});
  const json& env = pod["containers"][0]["env"];
  CHECK(std::find(env.begin(), env.end(),
                  json{{"name", "KUBELET_REGISTRAR_DIRECTORY_PATH"},
                       {"value", "/var/lib/k0s/kubelet/plugins_registry"}}) != env.end());
}

TEST_CASE("the default root is /var/lib/kubelet, read with or without a trailing slash",
          "[operator][spec][kubelet]") {
  json obj = childtest::LoadYaml("deploy/operator/samples/deviceconfig-v1beta1.yaml").front();
  auto plain = ParseDeviceConfig(obj);
  REQUIRE(plain.ok());
  CHECK(plain->spec.kubelet_root_dir == "/var/lib/kubelet");
  obj["spec"]["driverMode"] = "preinstalled";
  obj["spec"]["kubeletRootDir"] = "/var/snap/microk8s/common/var/lib/kubelet//";
  auto moved = ParseDeviceConfig(obj);
  REQUIRE(moved.ok());
  CHECK(moved->spec.kubelet_root_dir == "/var/snap/microk8s/common/var/lib/kubelet");
  CHECK(ValidateDeviceConfig(*moved).empty());
}

TEST_CASE("a kubeletRootDir that is no usable host directory is a field error",
          "[operator][spec][kubelet]") {
  for (const char* bad : {"var/lib/kubelet", "/", "/var/lib/../kubelet", "/var/./lib",
                          "/var/lib/kube let", "/var/lib/kubelet\n", ""}) {
    CAPTURE(bad);
    DeviceConfig dc = Sample();
    dc.spec.driver_mode = DriverMode::kPreinstalled;
    dc.spec.kubelet_root_dir = bad;
    const std::vector<FieldError> errors = ValidateDeviceConfig(dc);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].field == "spec.kubeletRootDir");
    CHECK(absl::StrContains(errors[0].message, "absolute directory path"));
  }
}

TEST_CASE("KMM's device plugin works with another kubelet root: only PodResources moves",
          "[operator][spec][kubelet]") {
  DeviceConfig dc = Sample();  // driverMode kmm, allocation devicePlugin
  dc.spec.kubelet_root_dir = kRoot;
  REQUIRE(ValidateDeviceConfig(dc).empty());
  ClusterApis apis;
  apis.kmm = true;
  const std::vector<Child> children = DesiredChildren(dc, apis, {});
  const json* module = Find(children, "Module", "neuron");
  REQUIRE(module != nullptr);
  const json& plugin = module->at("spec").at("devicePlugin");
  std::vector<std::string> all;
  Strings(plugin, all);
  CHECK(std::find(all.begin(), all.end(), "--device-plugin-dir=/var/lib/kubelet/device-plugins") !=
        all.end());
  CHECK(std::find(all.begin(), all.end(),
                  "--pod-resources-socket=/var/lib/k0s/kubelet/pod-resources/kubelet.sock") !=
        all.end());
  // KMM mounts the device-plugin directory itself: the Module brings no volume for it.
  for (const json& v : plugin.value("volumes", json::array())) CHECK(v["name"] != "device-plugins");
}

}  // namespace
}  // namespace neuron::op
