// File: lib/operator/children_metrics.cc
// Our node agent (cmd/neuron-node-agent: Prometheus metrics, inventory, NFD feature labels,
// AWS's UltraServer labels on its own Node) as the `<name>-node-metrics` DaemonSet in place of the
// seed's neuron-monitor, with its account (nodes get/patch), its headless Service and, where the
// Prometheus operator is installed, a ServiceMonitor. Mirrors deploy/node-agent/daemonset.yaml.
#include <string>

#include "lib/operator/children_internal.h"
#include "lib/operator/device_config_emulation.h"

namespace neuron::op::internal {
namespace {

constexpr int kMetricsPort = 8000;
constexpr char kFeaturesDir[] = "/etc/kubernetes/node-feature-discovery/features.d";
// The kubelet's PodResources directory (kPodResourcesDir) tells which pod holds which core (the
// neuron_core_allocation series).

// The agent's account: it merge-patches AWS's UltraServer labels on its own Node
// (lib/agent/node_label_publisher.h), so it needs nodes get and patch (RBAC cannot narrow that
// to the pod's own node); with compiled-model caches, the cache API too.
void AddAgentAccount(const DeviceConfig& dc, const std::string& sa, std::vector<Child>& out) {
  out.push_back(ServiceAccount(dc, sa, Component::kMetrics));
  json rules =
      json::array({{{"apiGroups", {""}}, {"resources", {"nodes"}}, {"verbs", {"get", "patch"}}}});
  if (dc.spec.compile_cache.enabled) {
    for (const json& r : CacheAgentRules()) rules.push_back(r);
  }
  AddClusterRole(dc, ClusterName(dc, "node-metrics"), rules, sa, Component::kMetrics, out);
}

}  // namespace

void AddMetrics(const DeviceConfig& dc, const ClusterApis& apis, const OperatorSettings& s,
                std::vector<Child>& out) {
  const std::string name = dc.name + "-node-metrics";
  AddAgentAccount(dc, name, out);

  // spec.nodeMetricsImage names the seed's neuron-monitor, which this DaemonSet does not run.
  const std::string image =
      dc.spec.node_agent_image.empty() ? s.default_node_agent_image : dc.spec.node_agent_image;
  const std::string pod_resources = KubeletPath(dc, kPodResourcesDir);
  json container = {
      {"name", "node-agent"},
      {"image", image},
      {"command", {"/usr/local/bin/neuron-node-agent"}},
      {"args",
       {"--host-root=/host", std::string("--features-dir=") + kFeaturesDir,
        "--pod-resources-socket=" + pod_resources + "/kubelet.sock"}},
      {"env", json::array({FieldRefEnv("NODE_NAME", "spec.nodeName"),
                           {{"name", "PORT"}, {"value", std::to_string(kMetricsPort)}}})},
      {"ports",
       json::array({{{"name", "metrics"}, {"containerPort", kMetricsPort}, {"protocol", "TCP"}}})},
      {"livenessProbe",
       {{"httpGet", {{"path", "/healthz"}, {"port", "metrics"}}}, {"initialDelaySeconds", 5}}},
      {"readinessProbe", {{"httpGet", {{"path", "/readyz"}, {"port", "metrics"}}}}},
      {"resources",
       {{"requests", {{"cpu", "10m"}, {"memory", "32Mi"}}}, {"limits", {{"memory", "64Mi"}}}}},
      // Reads sysfs and writes NFD's feature file: no privilege, no writable root (the seed's
      // neuron-monitor ran privileged as root). Compiled-model caches make it privileged
      // (children_cache.cc).
      {"securityContext",
       {{"readOnlyRootFilesystem", true},
        {"allowPrivilegeEscalation", false},
        {"capabilities", {{"drop", {"ALL"}}}}}},
      {"volumeMounts",
       json::array({{{"name", "host-sys"}, {"mountPath", "/host/sys"}, {"readOnly", true}},
                    NeuronOptMount(),
                    {{"name", "features-d"}, {"mountPath", kFeaturesDir}},
                    {{"name", "pod-resources"}, {"mountPath", pod_resources}}})}};
  json volumes = json::array({HostPathVolume("host-sys", "/sys"), NeuronOptVolume(),
                              HostPathVolume("features-d", kFeaturesDir, "DirectoryOrCreate"),
                              HostPathVolume("pod-resources", pod_resources)});
  AddEmulation(dc, container, volumes);
  // It keeps reporting through a driver upgrade: the upgrade taint must not evict it.
  json tolerations = NeuronTolerations();
  tolerations.push_back({{"key", "aws-neuron-driver-upgrade"}, {"operator", "Exists"}});
  json pod = {{"serviceAccountName", name},
              {"priorityClassName", "system-node-critical"},
              {"tolerations", std::move(tolerations)},
              {"containers", json::array({std::move(container)})},
              {"volumes", std::move(volumes)}};
  AddCacheToAgent(dc, s, pod);
  PlaceOnNeuronNodes(dc, pod);
  out.push_back({k8s::resources::kDaemonSets, DaemonSet(dc, name, Component::kMetrics, pod),
                 Component::kMetrics});

  // Headless: Prometheus scrapes every pod, not one behind a virtual IP.
  json svc = Object(dc, "v1", "Service", name, Component::kMetrics);
  svc["metadata"]["labels"]["app.kubernetes.io/name"] = name;
  svc["spec"] = {{"clusterIP", "None"},
                 {"selector", SelectorLabels(name)},
                 {"ports", json::array({{{"name", "metrics"},
                                         {"port", kMetricsPort},
                                         {"targetPort", "metrics"},
                                         {"protocol", "TCP"}}})}};
  out.push_back({k8s::resources::kServices, std::move(svc), Component::kMetrics});

  if (!apis.service_monitor) return;
  json sm = Object(dc, "monitoring.coreos.com/v1", "ServiceMonitor", name, Component::kMetrics);
  sm["spec"] = {{"selector", {{"matchLabels", SelectorLabels(name)}}},
                {"endpoints",
                 json::array({{{"port", "metrics"},
                               {"path", "/metrics"},
                               {"interval", "30s"},
                               // Series name their node, not only the pod's IP (alerts and the
                               // dashboard in deploy/monitoring read `node`).
                               {"relabelings",
                                json::array({{{"sourceLabels", {"__meta_kubernetes_pod_node_name"}},
                                              {"targetLabel", "node"}}})}}})}};
  out.push_back({kServiceMonitors, std::move(sm), Component::kMetrics});
}

}  // namespace neuron::op::internal
