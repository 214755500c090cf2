// File: lib/operator/children_dra.cc
// AWS's DRA mode (spec.draDriverImage): AWS's Neuron DRA kubelet plugin as the `<name>-dra-driver`
// DaemonSet, in place of the device plugin, the second scheduler and the extender. Its image
// is AWS's, so its command, environment, mounts and probe are the seed's (NEURON.md §1.3).
#include "absl/strings/str_cat.h"
#include "lib/operator/children_internal.h"

namespace neuron::op::internal {
namespace {

constexpr int kHealthPort = 51515;

}  // namespace

void AddDra(const DeviceConfig& dc, const ClusterApis& apis, std::vector<Child>& out) {
  const std::string name = dc.name + "-dra-driver";
  out.push_back(ServiceAccount(dc, name, Component::kDra));
  // The seed's role for this driver (its source is not public, so nothing narrower is known):
  // it publishes its node's ResourceSlices, reads claims and classes, and labels its node.
  const json rules =
      json::array({{{"apiGroups", {"resource.k8s.io"}},
                    {"resources", {"resourceslices"}},
                    {"verbs", {"get", "list", "watch", "create", "update", "patch", "delete"}}},
                   {{"apiGroups", {"resource.k8s.io"}},
                    {"resources", {"resourceclaims", "deviceclasses"}},
                    {"verbs", {"get", "list", "watch"}}},
                   {{"apiGroups", {""}},
                    {"resources", {"nodes"}},
                    {"verbs", {"get", "list", "watch", "patch", "update"}}},
                   {{"apiGroups", {""}}, {"resources", {"nodes/status"}}, {"verbs", {"patch"}}}});
  AddClusterRole(dc, ClusterName(dc, "dra-driver"), rules, name, Component::kDra, out);

  auto env = [](const char* k, const std::string& v) { return json{{"name", k}, {"value", v}}; };
  json container = {
      {"name", "neuron-dra-driver"},
      {"image", dc.spec.dra_driver_image},
      {"command", {"k8s-neuron-dra-driver"}},
      {"env", json::array({FieldRefEnv("NODE_NAME", "spec.nodeName"),
                           FieldRefEnv("POD_UID", "metadata.uid"), env("CDI_ROOT", kCdiDir),
                           env("KUBELET_REGISTRAR_DIRECTORY_PATH", KubeletPath(dc, kRegistryDir)),
                           env("KUBELET_PLUGINS_DIRECTORY_PATH", KubeletPath(dc, kPluginsDir)),
                           env("HEALTHCHECK_PORT", absl::StrCat(kHealthPort))})},
      {"livenessProbe",
       {{"grpc", {{"port", kHealthPort}, {"service", "liveness"}}},
        {"initialDelaySeconds", 30},
        {"periodSeconds", 10},
        {"timeoutSeconds", 5},
        {"failureThreshold", 3}}},
      {"resources",
       {{"requests", {{"cpu", "10m"}, {"memory", "128Mi"}}},
        {"limits", {{"cpu", "20m"}, {"memory", "256Mi"}}}}},
      // Runs as its image's user (root) to write kubelet plugin sockets and CDI specs in host
      // directories; not privileged (neither is the seed's).
      {"volumeMounts",
       json::array({{{"name", "plugins-registry"}, {"mountPath", KubeletPath(dc, kRegistryDir)}},
                    {{"name", "plugins"}, {"mountPath", KubeletPath(dc, kPluginsDir)}},
                    {{"name", "cdi"}, {"mountPath", kCdiDir}}})}};
  json pod = {
      {"serviceAccountName", name},
      {"hostNetwork", true},  // as the seed runs it
      {"priorityClassName", "system-node-critical"},
      {"tolerations", NeuronTolerations()},
      {"containers", json::array({std::move(container)})},
      {"volumes", json::array({HostPathVolume("plugins-registry", KubeletPath(dc, kRegistryDir)),
                               HostPathVolume("plugins", KubeletPath(dc, kPluginsDir)),
                               HostPathVolume("cdi", kCdiDir, "DirectoryOrCreate")})}};
  PlaceOnDriverNodes(dc, apis, pod);  // only where the driver is loaded
  out.push_back(
      {k8s::resources::kDaemonSets, DaemonSet(dc, name, Component::kDra, pod), Component::kDra});
}

}  // namespace neuron::op::internal
