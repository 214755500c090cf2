// File: lib/operator/children_driver.cc
// The driver (a KMM Module that also runs the device plugin), or in driverMode preinstalled
// the device plugin as the operator's own DaemonSet.
#include "absl/strings/str_cat.h"
#include "lib/operator/children_internal.h"

namespace neuron::op::internal {
namespace {

constexpr char kPluginDir[] = "/var/lib/kubelet/device-plugins";

// Our node agent's NFD rule (children_nfd.cc) sets this label on every Neuron node. NFD's own
// PCI label is not a safe default: Neuron devices are class 0880, outside NFD's default class
// whitelist, so `pci-1d0f.present` (the seed's default) appears only on a reconfigured NFD.
json DefaultNodeSelector() { return {{"feature.node.kubernetes.io/aws-neuron", "true"}}; }

std::string PluginServiceAccountAndRbac(const DeviceConfig& dc, std::vector<Child>& out) {
  const std::string sa = dc.name + "-device-plugin";
  out.push_back({{"", "v1", "serviceaccounts", true},
                 ServiceAccount(dc, sa, Component::kDevicePlugin),
                 Component::kDevicePlugin});
  AddClusterRole(dc, ClusterName(dc, "device-plugin"), DevicePluginRbacRules(), sa,
                 Component::kDevicePlugin, out);
  return sa;
}

}  // namespace

json DevicePluginRbacRules() {
  // Exactly what the plugin calls: its node's pods (list + watch for the cache, get) and merge
  // patches of its own annotation keys (the allocation handshake). Nothing on nodes.
  return json::array({{{"apiGroups", {""}},
                       {"resources", {"pods"}},
                       {"verbs", {"get", "list", "watch", "patch"}}}});
}

json DevicePluginContainer(const std::string& image) {
  return {
      {"name", "device-plugin"},
      {"image", image},
      {"command", {"/usr/local/bin/neuron-device-plugin"}},
      {"args",
       {"--host-root=/host", absl::StrCat("--device-plugin-dir=", kPluginDir),
        "--pod-resources-socket=/var/lib/kubelet/pod-resources/kubelet.sock"}},
      {"env", json::array({{{"name", "NODE_NAME"},
                            {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}}})},
      {"resources",
       {{"requests", {{"cpu", "10m"}, {"memory", "32Mi"}}}, {"limits", {{"memory", "128Mi"}}}}},
      {"securityContext",
       {{"readOnlyRootFilesystem", true},
        {"allowPrivilegeEscalation", false},
        {"capabilities", {{"drop", {"ALL"}}}}}},
      {"volumeMounts",
       json::array({{{"name", "pod-resources"}, {"mountPath", "/var/lib/kubelet/pod-resources"}},
                    {{"name", "host-sys"}, {"mountPath", "/host/sys"}, {"readOnly", true}},
                    {{"name", "host-dev"}, {"mountPath", "/host/dev"}, {"readOnly", true}}})}};
}

json DevicePluginVolumes() {
  auto host = [](const char* name, const char* path) {
    return json{{"name", name}, {"hostPath", {{"path", path}, {"type", "Directory"}}}};
  };
  return json::array({host("pod-resources", "/var/lib/kubelet/pod-resources"),
                      host("host-sys", "/sys"), host("host-dev", "/dev")});
}

void AddDriver(const DeviceConfig& dc, const ClusterApis& apis, const OperatorSettings&,
               std::vector<Child>& out) {
  const std::string plugin_sa = PluginServiceAccountAndRbac(dc, out);
  const std::string loader_sa = dc.name + "-module-loader";
  // KMM's worker pods run under this account (OpenShift binds the privileged SCC to it).
  out.push_back({{"", "v1", "serviceaccounts", true},
                 ServiceAccount(dc, loader_sa, Component::kDriver),
                 Component::kDriver});
  if (!apis.kmm) return;  // the reconciler reports KMMNotInstalled

  json mapping = {{"regexp", "^.+$"},
                  {"containerImage", dc.spec.drivers_image + "-${KERNEL_VERSION}"},
                  {"inTreeModulesToRemove", {"neuron"}}};
  json container = {{"modprobe", {{"moduleName", "neuron"}}},
                    {"kernelMappings", json::array({mapping})},
                    {"imagePullPolicy", "Always"}};
  if (!dc.spec.driver_version.empty()) container["version"] = dc.spec.driver_version;

  // KMM mounts /var/lib/kubelet/device-plugins itself and runs the container privileged.
  json plugin = {{"serviceAccountName", plugin_sa},
                 {"container", DevicePluginContainer(dc.spec.device_plugin_image)},
                 {"volumes", DevicePluginVolumes()}};
  plugin["container"].erase("securityContext");
  plugin["container"].erase("resources");

  json m = Object(dc, "kmm.sigs.x-k8s.io/v1beta1", "Module", dc.name, Component::kDriver);
  m["spec"] = {
      {"selector", dc.spec.selector.empty() ? DefaultNodeSelector() : json(dc.spec.selector)},
      {"moduleLoader", {{"serviceAccountName", loader_sa}, {"container", container}}},
      // Upgrades taint a node NoExecute (driver upgrade) and drains cordon it: the loader must
      // stay to unload the module only after the plugin has gone.
      {"tolerations", json::array({{{"key", "aws-neuron-driver-upgrade"},
                                    {"operator", "Equal"},
                                    {"value", "true"},
                                    {"effect", "NoExecute"}},
                                   {{"key", "node.kubernetes.io/unschedulable"},
                                    {"operator", "Exists"},
                                    {"effect", "NoSchedule"}}})}};
  if (!dc.DraMode()) m["spec"]["devicePlugin"] = plugin;
  if (!dc.spec.image_repo_secret.empty()) {
    m["spec"]["imageRepoSecret"] = {{"name", dc.spec.image_repo_secret}};
  }
  out.push_back(
      {{"kmm.sigs.x-k8s.io", "v1beta1", "modules", true}, std::move(m), Component::kDriver});
}

void AddPreinstalledPlugin(const DeviceConfig& dc, const OperatorSettings&,
                           std::vector<Child>& out) {
  const std::string sa = PluginServiceAccountAndRbac(dc, out);
  const std::string name = dc.name + "-device-plugin";
  json container = DevicePluginContainer(dc.spec.device_plugin_image);
  container["volumeMounts"].push_back({{"name", "device-plugins"}, {"mountPath", kPluginDir}});
  json volumes = DevicePluginVolumes();
  volumes.push_back(
      {{"name", "device-plugins"}, {"hostPath", {{"path", kPluginDir}, {"type", "Directory"}}}});
  json pod = {
      {"serviceAccountName", sa},
      {"priorityClassName", "system-node-critical"},
      {"tolerations",
       json::array(
           {{{"key", "aws.amazon.com/neuron"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}})},
      {"containers", json::array({container})},
      {"volumes", volumes}};
  PlaceOnNeuronNodes(dc, pod);
  AddPullSecret(dc, pod);
  json ds = Object(dc, "apps/v1", "DaemonSet", name, Component::kDevicePlugin);
  ds["spec"] = {{"selector", {{"matchLabels", SelectorLabels(name)}}},
                {"updateStrategy", {{"type", "RollingUpdate"}}},
                {"template", {{"metadata", {{"labels", PodLabels(name)}}}, {"spec", pod}}}};
  out.push_back({k8s::resources::kDaemonSets, std::move(ds), Component::kDevicePlugin});
}

}  // namespace neuron::op::internal
