// File: lib/operator/children_node.cc
// Node-level pieces besides the driver: our node agent (metrics, inventory, NFD feature
// labels) as the `<name>-node-metrics` DaemonSet with its Service and ServiceMonitor, the NFD
// rule that labels Neuron nodes, and in DRA mode the DRA driver DaemonSet.
#include <cstdio>

#include "lib/operator/children_internal.h"
#include "lib/topology/device_model.h"

namespace neuron::op::internal {
namespace {

constexpr int kMetricsPort = 8000;
const k8s::ResourceRef kSa{"", "v1", "serviceaccounts", true};

json HostPathVolume(const char* name, const char* path, const char* type = "Directory") {
  return {{"name", name}, {"hostPath", {{"path", path}, {"type", type}}}};
}

json NeuronTolerations() {
  return json::array(
      {{{"key", "aws.amazon.com/neuron"}, {"operator", "Exists"}, {"effect", "NoSchedule"}},
       {{"key", "CriticalAddonsOnly"}, {"operator", "Exists"}}});
}

json DaemonSet(const DeviceConfig& dc, const std::string& name, Component c, json pod) {
  PlaceOnNeuronNodes(dc, pod);
  AddPullSecret(dc, pod);
  json ds = Object(dc, "apps/v1", "DaemonSet", name, c);
  ds["spec"] = {{"selector", {{"matchLabels", SelectorLabels(name)}}},
                {"updateStrategy", {{"type", "RollingUpdate"}}},
                {"template", {{"metadata", {{"labels", PodLabels(name)}}}, {"spec", pod}}}};
  return ds;
}

}  // namespace

void AddMetrics(const DeviceConfig& dc, const ClusterApis& apis, const OperatorSettings& s,
                std::vector<Child>& out) {
  const std::string name = dc.name + "-node-metrics";
  json sa = ServiceAccount(dc, name, Component::kMetrics);
  sa["automountServiceAccountToken"] = false;  // the agent never calls the API server
  out.push_back({kSa, std::move(sa), Component::kMetrics});
  const std::string image =
      dc.spec.node_agent_image.empty() ? s.default_node_agent_image : dc.spec.node_agent_image;
  json container = {
      {"name", "node-agent"},
      {"image", image},
      {"command", {"/usr/local/bin/neuron-node-agent"}},
      {"args",
       {"--host-root=/host", "--features-dir=/etc/kubernetes/node-feature-discovery/features.d"}},
      {"env", json::array({{{"name", "NODE_NAME"},
                            {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}},
                           {{"name", "PORT"}, {"value", std::to_string(kMetricsPort)}}})},
      {"ports",
       json::array({{{"name", "metrics"}, {"containerPort", kMetricsPort}, {"protocol", "TCP"}}})},
      {"livenessProbe",
       {{"httpGet", {{"path", "/healthz"}, {"port", "metrics"}}}, {"initialDelaySeconds", 5}}},
      {"readinessProbe", {{"httpGet", {{"path", "/readyz"}, {"port", "metrics"}}}}},
      {"resources",
       {{"requests", {{"cpu", "10m"}, {"memory", "32Mi"}}}, {"limits", {{"memory", "64Mi"}}}}},
      // Reads sysfs and writes NFD feature files: no privilege, no writable root.
      {"securityContext",
       {{"readOnlyRootFilesystem", true},
        {"allowPrivilegeEscalation", false},
        {"capabilities", {{"drop", {"ALL"}}}}}},
      {"volumeMounts",
       json::array({{{"name", "host-sys"}, {"mountPath", "/host/sys"}, {"readOnly", true}},
                    {{"name", "features-d"},
                     {"mountPath", "/etc/kubernetes/node-feature-discovery/features.d"}}})}};
  json pod = {
      {"serviceAccountName", name},
      {"automountServiceAccountToken", false},
      {"priorityClassName", "system-node-critical"},
      {"tolerations", NeuronTolerations()},
      {"containers", json::array({container})},
      {"volumes", json::array({HostPathVolume("host-sys", "/sys"),
                               HostPathVolume("features-d",
                                              "/etc/kubernetes/node-feature-discovery/features.d",
                                              "DirectoryOrCreate")})}};
  out.push_back({k8s::resources::kDaemonSets, DaemonSet(dc, name, Component::kMetrics, pod),
                 Component::kMetrics});

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
                 json::array({{{"port", "metrics"}, {"path", "/metrics"}, {"interval", "30s"}}})}};
  out.push_back({{"monitoring.coreos.com", "v1", "servicemonitors", true},
                 std::move(sm),
                 Component::kMetrics});
}

void AddNfdRule(const DeviceConfig& dc, const ClusterApis& apis, std::vector<Child>& out) {
  if (apis.nfd_group.empty()) return;  // reported as Degraded by the reconciler
  // Every Neuron PCI device id lib/topology knows (Trn3 included), lower-case hex without 0x,
  // as NFD's pci source reports them.
  json ids = json::array();
  for (unsigned id = 0x7000; id <= 0x7fff; ++id) {
    if (!topology::ModelForPciDevice(static_cast<uint16_t>(id))) continue;
    char hex[8];
    std::snprintf(hex, sizeof(hex), "%04x", id);
    ids.push_back(hex);
  }
  const std::string api = apis.nfd_group + "/v1alpha1";
  json rule =
      Object(dc, api.c_str(), "NodeFeatureRule", ClusterName(dc, "neuron"), Component::kNfd, false);
  rule["spec"] = {
      {"rules",
       json::array({{{"name", "aws-neuron"},
                     {"labels", {{"feature.node.kubernetes.io/aws-neuron", "true"}}},
                     {"matchFeatures",
                      json::array({{{"feature", "pci.device"},
                                    {"matchExpressions",
                                     {{"vendor", {{"op", "In"}, {"value", {"1d0f"}}}},
                                      {"device", {{"op", "In"}, {"value", ids}}}}}}})}}})}};
  out.push_back(
      {{apis.nfd_group, "v1alpha1", "nodefeaturerules", false}, std::move(rule), Component::kNfd});
}

void AddDra(const DeviceConfig& dc, std::vector<Child>& out) {
  const std::string name = dc.name + "-dra-driver";
  out.push_back({kSa, ServiceAccount(dc, name, Component::kDra), Component::kDra});
  // As upstream's DRA driver DaemonSet (NEURON.md §1.3): it publishes ResourceSlices.
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
  auto env = [](const char* k, const char* v) { return json{{"name", k}, {"value", v}}; };
  auto field = [](const char* k, const char* path) {
    return json{{"name", k}, {"valueFrom", {{"fieldRef", {{"fieldPath", path}}}}}};
  };
  json container = {
      {"name", "dra-driver"},
      {"image", dc.spec.dra_driver_image},
      {"command", {"k8s-neuron-dra-driver"}},
      {"env",
       json::array({field("NODE_NAME", "spec.nodeName"), field("POD_UID", "metadata.uid"),
                    env("CDI_ROOT", "/var/run/cdi"),
                    env("KUBELET_REGISTRAR_DIRECTORY_PATH", "/var/lib/kubelet/plugins_registry"),
                    env("KUBELET_PLUGINS_DIRECTORY_PATH", "/var/lib/kubelet/plugins"),
                    env("HEALTHCHECK_PORT", "51515")})},
      {"livenessProbe", {{"grpc", {{"port", 51515}, {"service", "liveness"}}}}},
      {"resources",
       {{"requests", {{"cpu", "10m"}, {"memory", "128Mi"}}},
        {"limits", {{"cpu", "20m"}, {"memory", "256Mi"}}}}},
      // Writes CDI specs and kubelet plugin sockets on the host.
      {"securityContext", {{"privileged", true}}},
      {"volumeMounts",
       json::array(
           {{{"name", "plugins-registry"}, {"mountPath", "/var/lib/kubelet/plugins_registry"}},
            {{"name", "plugins"}, {"mountPath", "/var/lib/kubelet/plugins"}},
            {{"name", "cdi"}, {"mountPath", "/var/run/cdi"}}})}};
  json pod = {{"serviceAccountName", name},
              {"hostNetwork", true},
              {"tolerations", NeuronTolerations()},
              {"containers", json::array({container})},
              {"volumes",
               json::array({HostPathVolume("plugins-registry", "/var/lib/kubelet/plugins_registry"),
                            HostPathVolume("plugins", "/var/lib/kubelet/plugins"),
                            HostPathVolume("cdi", "/var/run/cdi", "DirectoryOrCreate")})}};
  out.push_back(
      {k8s::resources::kDaemonSets, DaemonSet(dc, name, Component::kDra, pod), Component::kDra});
}

}  // namespace neuron::op::internal
