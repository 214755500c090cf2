// File: lib/operator/children_dra_driver.cc
// Our DRA driver (allocation dra or mixed): devicePluginImage run as
// `neuron-device-plugin --api=dra` in the `<name>-dra-driver` DaemonSet, with the least RBAC
// its kubelet plugin needs. Mounts mirror the device plugin's (sysfs and /dev under
// --host-root, the Neuron tools' config) plus the kubelet's plugin directories and CDI's.
#include "absl/strings/str_cat.h"
#include "lib/operator/children_internal.h"
#include "lib/operator/device_config_emulation.h"

namespace neuron::op::internal {
namespace {

// The checkpoint of prepared claims: under the plugins mount, so it survives pod restarts.
constexpr char kStateDir[] = "plugins/neuron.aws.com";
constexpr int kDriverMetricsPort = 2112;  // as the device plugin's

// What the kubelet plugin calls: its node's ResourceSlices; the claim being prepared; its Node
// (the slices' owner reference carries the node's UID, its labels the network node layers);
// list on Nodes to find the node holding node id 0 of an UltraServer set by its labels
// (NEURON_GLOBAL_TOPOID0_HOST); Events on claims it cannot prepare.
json DraDriverRules() {
  return json::array(
      {{{"apiGroups", {"resource.k8s.io"}},
        {"resources", {"resourceslices"}},
        {"verbs", {"get", "list", "watch", "create", "update", "patch", "delete"}}},
       {{"apiGroups", {"resource.k8s.io"}}, {"resources", {"resourceclaims"}}, {"verbs", {"get"}}},
       {{"apiGroups", {""}}, {"resources", {"nodes"}}, {"verbs", {"get", "list"}}},
       {{"apiGroups", {""}}, {"resources", {"events"}}, {"verbs", {"create"}}}});
}

json DraDriverArgs(const DeviceConfig& dc) {
  json args = {"--api=dra",
               "--host-root=/host",
               absl::StrCat("--kubelet-registrar-dir=", KubeletPath(dc, kRegistryDir)),
               absl::StrCat("--kubelet-plugins-dir=", KubeletPath(dc, kPluginsDir)),
               absl::StrCat("--cdi-root=", kCdiDir),
               absl::StrCat("--dra-state-dir=", KubeletPath(dc, kStateDir)),
               absl::StrCat("--metrics-listen=0.0.0.0:", kDriverMetricsPort)};
  if (dc.spec.dra.partitionable_devices) args.push_back("--dra-partitionable-devices=true");
  if (dc.spec.dra.device_taints) args.push_back("--dra-device-taints=true");
  return args;
}

json DraDriverContainer(const DeviceConfig& dc) {
  auto mount = [](const char* name, const std::string& path, bool read_only) {
    json m = {{"name", name}, {"mountPath", path}};
    if (read_only) m["readOnly"] = true;
    return m;
  };
  auto probe = [](const char* path) {
    return json{{"httpGet", {{"path", path}, {"port", "metrics"}}}, {"periodSeconds", 10}};
  };
  json liveness = probe("/healthz");
  liveness["initialDelaySeconds"] = 5;
  return {
      {"name", "dra-driver"},
      {"image", dc.spec.device_plugin_image},
      {"command", {"/usr/local/bin/neuron-device-plugin"}},
      {"args", DraDriverArgs(dc)},
      {"env", json::array({FieldRefEnv("NODE_NAME", "spec.nodeName")})},
      {"ports",
       json::array(
           {{{"name", "metrics"}, {"containerPort", kDriverMetricsPort}, {"protocol", "TCP"}}})},
      {"livenessProbe", std::move(liveness)},
      {"readinessProbe", probe("/readyz")},
      {"resources",
       {{"requests", {{"cpu", "10m"}, {"memory", "32Mi"}}}, {"limits", {{"memory", "128Mi"}}}}},
      // As the device plugin: sockets, checkpoint and CDI specs in host directories, sysfs and
      // /dev read-only; no privilege, no writable root.
      {"securityContext",
       {{"readOnlyRootFilesystem", true},
        {"allowPrivilegeEscalation", false},
        {"capabilities", {{"drop", {"ALL"}}}}}},
      {"volumeMounts",
       json::array({mount("plugins-registry", KubeletPath(dc, kRegistryDir), false),
                    mount("plugins", KubeletPath(dc, kPluginsDir), false),
                    mount("cdi", kCdiDir, false), mount("host-sys", "/host/sys", true),
                    mount("host-dev", "/host/dev", true), NeuronOptMount()})}};
}

// Compile caches in claims (NeuronConfig.compileCache): the node agent's cache directory, where
// the driver makes each claim's overlay view for CDI to bind-mount. The view is mounted from this
// container, so it needs CAP_SYS_ADMIN (privileged) and Bidirectional propagation for the
// host's runtime to see it.
void AddCacheToDraDriver(const DeviceConfig& dc, json& container, json& volumes) {
  const CompileCache& cc = dc.spec.compile_cache;
  if (!cc.enabled) return;
  container["args"].push_back(absl::StrCat("--cache-dir=", cc.host_path));
  container["securityContext"] = {{"privileged", true}, {"readOnlyRootFilesystem", true}};
  container["volumeMounts"].push_back(
      {{"name", "cache-dir"}, {"mountPath", cc.host_path}, {"mountPropagation", "Bidirectional"}});
  volumes.push_back(HostPathVolume("cache-dir", cc.host_path, "DirectoryOrCreate"));
}

}  // namespace

void AddDraDriver(const DeviceConfig& dc, const ClusterApis& apis, std::vector<Child>& out) {
  const std::string name = dc.name + "-dra-driver";
  out.push_back(ServiceAccount(dc, name, Component::kDra));
  AddClusterRole(dc, ClusterName(dc, "dra-driver"), DraDriverRules(), name, Component::kDra, out);
  json container = DraDriverContainer(dc);
  json volumes = json::array({HostPathVolume("plugins-registry", KubeletPath(dc, kRegistryDir)),
                              HostPathVolume("plugins", KubeletPath(dc, kPluginsDir)),
                              HostPathVolume("cdi", kCdiDir, "DirectoryOrCreate"),
                              HostPathVolume("host-sys", "/sys"),
                              HostPathVolume("host-dev", "/dev"), NeuronOptVolume()});
  AddCacheToDraDriver(dc, container, volumes);
  AddEmulation(dc, container, volumes);
  json pod = {{"serviceAccountName", name},
              {"priorityClassName", "system-node-critical"},
              {"tolerations", NeuronTolerations()},
              {"containers", json::array({std::move(container)})},
              {"volumes", std::move(volumes)}};
  PlaceOnDriverNodes(dc, apis, pod);
  // Pure dra: every selected node. Mixed: only the nodes labelled for DRA.
  if (dc.spec.allocation == Allocation::kMixed) RequireDraNodes(pod);
  out.push_back(
      {k8s::resources::kDaemonSets, DaemonSet(dc, name, Component::kDra, pod), Component::kDra});
}

}  // namespace neuron::op::internal
