// File: lib/operator/children_driver.cc
// The driver: a KMM Module that loads neuron.ko and runs our device plugin on the nodes where it
// is loaded; or, in driverMode preinstalled, our device plugin as the operator's own DaemonSet.
#include "absl/strings/str_cat.h"
#include "lib/operator/children_internal.h"
#include "lib/operator/device_config_emulation.h"

namespace neuron::op::internal {
namespace {

// The kubelet serves device plugins at this fixed path whatever its --root-dir
// (pluginapi.DevicePluginPath; a 1.34 kubelet run with another root showed it), and KMM mounts
// it itself. PodResources' socket is under spec.kubeletRootDir (kPodResourcesDir).
constexpr char kPluginDir[] = "/var/lib/kubelet/device-plugins";

// NFD's own PCI label is no default: Neuron devices are PCI class 0880, outside NFD's default
// class whitelist, so the seed's `pci-1d0f.present` (and `pci-0880_1d0f.present`) appear only on
// a reconfigured NFD. Our NodeFeatureRule makes a default NFD set this label from its PCI scan.
// (A Module selector is one equality map: it cannot OR terms as the DaemonSets' affinity does.)
json DefaultModuleSelector() { return {{"feature.node.kubernetes.io/aws-neuron", "true"}}; }

// Our neuron-device-plugin, as deploy/device-plugin/daemonset.yaml runs it. KMM's container
// spec has neither name nor securityContext (KMM names it and runs it privileged).
constexpr int kDevicePluginMetricsPort = 2112;

json PluginContainer(const DeviceConfig& dc, bool for_kmm) {
  const std::string plugin_dir = kPluginDir;
  const std::string pod_resources_dir = KubeletPath(dc, kPodResourcesDir);
  json mounts = json::array();
  if (!for_kmm) {  // KMM mounts the kubelet's device-plugin directory itself
    mounts.push_back({{"name", "device-plugins"}, {"mountPath", plugin_dir}});
  }
  // PodResources: what pods hold (one piece of silicon, one pod) and the annotation handshake.
  mounts.push_back({{"name", "pod-resources"}, {"mountPath", pod_resources_dir}});
  mounts.push_back({{"name", "host-sys"}, {"mountPath", "/host/sys"}, {"readOnly", true}});
  mounts.push_back({{"name", "host-dev"}, {"mountPath", "/host/dev"}, {"readOnly", true}});
  mounts.push_back(NeuronOptMount());
  json c = {
      {"image", dc.spec.device_plugin_image},
      {"command", {"/usr/local/bin/neuron-device-plugin"}},
      {"args",
       {"--host-root=/host", absl::StrCat("--device-plugin-dir=", plugin_dir),
        absl::StrCat("--pod-resources-socket=", pod_resources_dir, "/kubelet.sock")}},
      {"env", json::array({FieldRefEnv("NODE_NAME", "spec.nodeName")})},
      {"resources",
       {{"requests", {{"cpu", "10m"}, {"memory", "32Mi"}}}, {"limits", {{"memory", "128Mi"}}}}},
      {"volumeMounts", std::move(mounts)}};
  if (!for_kmm) {
    c["name"] = "device-plugin";
    // --metrics-listen's default. KMM's devicePlugin container has no ports field.
    c["ports"] = json::array(
        {{{"name", "metrics"}, {"containerPort", kDevicePluginMetricsPort}, {"protocol", "TCP"}}});
    // Sockets in host directories and reads of sysfs: no privilege, no writable root.
    c["securityContext"] = {{"readOnlyRootFilesystem", true},
                            {"allowPrivilegeEscalation", false},
                            {"capabilities", {{"drop", {"ALL"}}}}};
  }
  return c;
}

json PluginVolumes(const DeviceConfig& dc, bool for_kmm) {
  json v = json::array();
  if (!for_kmm) v.push_back(HostPathVolume("device-plugins", kPluginDir));
  v.push_back(HostPathVolume("pod-resources", KubeletPath(dc, kPodResourcesDir)));
  v.push_back(HostPathVolume("host-sys", "/sys"));
  v.push_back(HostPathVolume("host-dev", "/dev"));
  v.push_back(NeuronOptVolume());
  return v;
}

// The plugin's account: it reads the pods of its node (list + watch for its cache, get) and
// merge-patches its own annotation keys on them. Nothing on nodes. Returns the account name.
std::string AddPluginAccount(const DeviceConfig& dc, std::vector<Child>& out) {
  std::string sa = dc.name + "-device-plugin";
  out.push_back(ServiceAccount(dc, sa, Component::kDevicePlugin));
  const json rules = json::array({{{"apiGroups", {""}},
                                   {"resources", {"pods"}},
                                   {"verbs", {"get", "list", "watch", "patch"}}}});
  AddClusterRole(dc, ClusterName(dc, "device-plugin"), rules, sa, Component::kDevicePlugin, out);
  return sa;
}

}  // namespace

void AddDriver(const DeviceConfig& dc, const ClusterApis& apis, std::vector<Child>& out) {
  if (!apis.kmm) return;  // the reconciler reports that KMM is not installed
  // Neither DRA nor mixed allocation (AddPluginDaemonSet runs the plugin there).
  const bool plugin = dc.RunsDevicePlugin() && dc.spec.allocation == Allocation::kDevicePlugin &&
                      !dc.spec.device_plugin_image.empty();
  const std::string plugin_sa = plugin ? AddPluginAccount(dc, out) : "";
  // KMM's worker pods (modprobe) run under this account. It needs no API access on Kubernetes;
  // OpenShift must also let it use the privileged SCC.
  const std::string loader_sa = dc.name + "-module-loader";
  out.push_back(ServiceAccount(dc, loader_sa, Component::kDriver));

  json mapping = {{"regexp", "^.+$"},
                  {"containerImage", dc.spec.drivers_image + "-${KERNEL_VERSION}"},
                  {"inTreeModulesToRemove", {"neuron"}}};
  json loader = {{"modprobe", {{"moduleName", "neuron"}}},
                 {"kernelMappings", json::array({std::move(mapping)})},
                 {"imagePullPolicy", "Always"}};
  // With a version, KMM loads the module only on nodes labelled
  // kmm.node.kubernetes.io/version-module.<ns>.<name>=<version> (the ordered upgrade).
  if (!dc.spec.driver_version.empty()) loader["version"] = dc.spec.driver_version;

  json spec = {
      {"selector", dc.spec.selector.empty() ? DefaultModuleSelector() : json(dc.spec.selector)},
      {"moduleLoader", {{"serviceAccountName", loader_sa}, {"container", std::move(loader)}}},
      // KMM gives its pods only these. A driver upgrade taints the node NoExecute and a drain
      // cordons it: the loader must stay to unload the module after the plugin has gone (the
      // seed's fix for modprobe -r failing under a live plugin). Neuron node groups are often
      // tainted aws.amazon.com/neuron, and the loader and plugin must run there.
      {"tolerations", json::array({{{"key", "aws-neuron-driver-upgrade"},
                                    {"operator", "Equal"},
                                    {"value", "true"},
                                    {"effect", "NoExecute"}},
                                   {{"key", "node.kubernetes.io/unschedulable"},
                                    {"operator", "Exists"},
                                    {"effect", "NoSchedule"}},
                                   {{"key", "aws.amazon.com/neuron"},
                                    {"operator", "Exists"},
                                    {"effect", "NoSchedule"}}})}};
  if (plugin) {
    // KMM runs the plugin privileged (not ours to choose). It talks to the API server with the
    // ordinary service-account token, so the seed's projected kubelet-CA volume (an OpenShift
    // kubelet-serving CA merged into kube-root-kubelet-ca) is not needed: it is left out.
    spec["devicePlugin"] = {{"serviceAccountName", plugin_sa},
                            {"container", PluginContainer(dc, /*for_kmm=*/true)},
                            {"volumes", PluginVolumes(dc, /*for_kmm=*/true)}};
  }
  if (!dc.spec.image_repo_secret.empty()) {
    spec["imageRepoSecret"] = {{"name", dc.spec.image_repo_secret}};  // KMM's pods pull with it
  }
  json m = Object(dc, "kmm.sigs.x-k8s.io/v1beta1", "Module", dc.name, Component::kDriver);
  m["spec"] = std::move(spec);
  out.push_back({kModules, std::move(m), Component::kDriver});
}

void AddPluginDaemonSet(const DeviceConfig& dc, const ClusterApis& apis, std::vector<Child>& out) {
  const bool mixed = dc.spec.allocation == Allocation::kMixed;
  const bool own = dc.spec.driver_mode == DriverMode::kPreinstalled || mixed;
  if (!own || !dc.RunsDevicePlugin() || dc.spec.device_plugin_image.empty()) return;
  const std::string sa = AddPluginAccount(dc, out);
  json container = PluginContainer(dc, /*for_kmm=*/false);
  json volumes = PluginVolumes(dc, /*for_kmm=*/false);
  AddEmulation(dc, container, volumes);
  json pod = {{"serviceAccountName", sa},
              {"priorityClassName", "system-node-critical"},
              {"tolerations", NeuronTolerations()},
              {"containers", json::array({std::move(container)})},
              {"volumes", std::move(volumes)}};
  PlaceOnDriverNodes(dc, apis, pod);
  if (mixed) AvoidDraNodes(pod);
  out.push_back({k8s::resources::kDaemonSets,
                 DaemonSet(dc, dc.name + "-device-plugin", Component::kDevicePlugin, pod),
                 Component::kDevicePlugin});
}

}  // namespace neuron::op::internal
