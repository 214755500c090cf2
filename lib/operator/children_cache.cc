// File: lib/operator/children_cache.cc
// Compiled-model caches (spec.compileCache, lib/cache): the CSIDriver cache.neuron.aws.com, and
// what the node agent needs to serve it: its cache flags, privilege (overlay mounts), the cache
// directory, the kubelet's directories (pods' volumes, the plugin socket, registration) and RBAC
// over the cache API. Mirrors deploy/node-agent/daemonset.yaml.
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/cache/cache_api.h"
#include "lib/operator/children_internal.h"

namespace neuron::op::internal {

void AddCsiDriver(const DeviceConfig& dc, std::vector<Child>& out) {
  if (!dc.spec.compile_cache.enabled) return;
  // Named after the driver (the kubelet finds it by that name), so not per DeviceConfig.
  json drv = Object(dc, "storage.k8s.io/v1", "CSIDriver", cache::kCsiDriverName,
                    Component::kMetrics, /*namespaced=*/false);
  drv["spec"] = {{"attachRequired", false},
                 // The node driver reads the pod's namespace and name to resolve a NeuronCache
                 // in that namespace and to report which pods use a cache.
                 {"podInfoOnMount", true},
                 {"volumeLifecycleModes", {"Ephemeral"}},
                 // Read-only content shared by every pod: no ownership change per pod.
                 {"fsGroupPolicy", "None"},
                 {"requiresRepublish", false}};
  out.push_back({kCsiDrivers, std::move(drv), Component::kMetrics});
}

json CacheAgentRules() {
  return json::array(
      {{{"apiGroups", {"k8s.aws"}},
        {"resources", {"neuroncaches", "clusterneuroncaches"}},
        {"verbs", {"get", "list", "watch"}}},
       {{"apiGroups", {"k8s.aws"}},
        {"resources", {"neuroncachenodes"}},
        {"verbs", {"get", "create", "update", "patch"}}},
       // Registry pull secrets named by the caches (a cache's namespace, or the operator's).
       {{"apiGroups", {""}}, {"resources", {"secrets"}}, {"verbs", {"get"}}},
       {{"apiGroups", {""}}, {"resources", {"events"}}, {"verbs", {"create", "patch"}}}});
}

namespace {

json Mount(const char* name, const std::string& path) {
  return {{"name", name}, {"mountPath", path}};
}

}  // namespace

void AddCacheToAgent(const DeviceConfig& dc, const OperatorSettings& s, json& pod) {
  const CompileCache& cc = dc.spec.compile_cache;
  if (!cc.enabled) return;
  json& ctr = pod["containers"][0];
  const std::string kubelet = dc.spec.kubelet_root_dir;
  for (const std::string& arg :
       {absl::StrCat("--cache-dir=", cc.host_path), std::string("--csi=true"),
        absl::StrCat("--kubelet-dir=", kubelet), absl::StrCat("--operator-namespace=", s.ns)}) {
    ctr["args"].push_back(arg);
  }
  // Overlay mounts into pods' volume directories need CAP_SYS_ADMIN in the host's mount
  // namespace; privileged is what CSI node plugins run as.
  ctr["securityContext"] = {{"privileged", true}, {"readOnlyRootFilesystem", true}};
  // Every path at its host path: the kubelet hands the driver host paths.
  json mount_kubelet = Mount("kubelet-dir", kubelet);
  mount_kubelet["mountPropagation"] = "Bidirectional";  // pods must see the agent's mounts
  for (json m : {Mount("cache-dir", cc.host_path), std::move(mount_kubelet),
                 Mount("kubelet-plugins", KubeletPath(dc, "plugins")),
                 Mount("kubelet-plugins-registry", KubeletPath(dc, "plugins_registry"))}) {
    ctr["volumeMounts"].push_back(std::move(m));
  }
  for (json v : {HostPathVolume("cache-dir", cc.host_path, "DirectoryOrCreate"),
                 HostPathVolume("kubelet-dir", kubelet),
                 HostPathVolume("kubelet-plugins", KubeletPath(dc, "plugins"), "DirectoryOrCreate"),
                 HostPathVolume("kubelet-plugins-registry", KubeletPath(dc, "plugins_registry"),
                                "DirectoryOrCreate")}) {
    pod["volumes"].push_back(std::move(v));
  }
  // No preStop: on SIGTERM the agent stops serving CSI and leaves mounts in place (pods keep
  // them); 30 s is room to finish a write of its NeuronCacheNode.
  pod["terminationGracePeriodSeconds"] = 30;
}

}  // namespace neuron::op::internal
