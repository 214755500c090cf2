// File: lib/operator/children_scheduler.cc
// The Neuron-aware second kube-scheduler (its KubeSchedulerConfiguration calls our extender for
// filter, prioritize, preempt and bind) and the extender's Deployment + Service. Mirrors
// deploy/scheduler/, which deploy_scheduler_test checks against the v1 types.
#include "absl/strings/str_cat.h"
#include "lib/operator/children_internal.h"

namespace neuron::op::internal {
namespace {

constexpr int kExtenderPort = 12345;
const k8s::ResourceRef kSa{"", "v1", "serviceaccounts", true};
const k8s::ResourceRef kRoles{"rbac.authorization.k8s.io", "v1", "roles", true};
const k8s::ResourceRef kRoleBindings{"rbac.authorization.k8s.io", "v1", "rolebindings", true};
const k8s::ResourceRef kClusterRoleBindings{"rbac.authorization.k8s.io", "v1",
                                            "clusterrolebindings", false};

std::string SchedulerName(const DeviceConfig& dc) { return dc.name + "-custom-scheduler"; }
std::string ExtenderName(const DeviceConfig& dc) { return dc.name + "-custom-scheduler-extension"; }
// Pods opt in with spec.schedulerName; the default DeviceConfig keeps the familiar name.
std::string ProfileName(const DeviceConfig& dc) {
  return dc.name == "neuron" ? "neuron-scheduler" : dc.name + "-neuron-scheduler";
}

std::string SchedulerConfig(const DeviceConfig& dc) {
  return absl::StrCat(
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n"
      "leaderElection:\n"
      "  leaderElect: true\n"
      "  resourceName: ",
      SchedulerName(dc), "\n", "  resourceNamespace: ", dc.ns, "\n",
      "profiles:\n"
      "  - schedulerName: ",
      ProfileName(dc), "\n",
      "extenders:\n"
      "  - urlPrefix: http://",
      ExtenderName(dc), ".", dc.ns, ".svc:", kExtenderPort, "\n",
      "    filterVerb: filter\n"
      "    prioritizeVerb: prioritize\n"
      "    weight: 5\n"
      "    preemptVerb: preempt\n"
      "    bindVerb: bind\n"
      "    enableHTTPS: false\n"
      "    nodeCacheCapable: true\n"
      "    httpTimeout: 10s\n"
      "    ignorable: false\n"
      "    managedResources:\n"
      "      - name: aws.amazon.com/neuron\n"
      "        ignoredByScheduler: false\n"
      "      - name: aws.amazon.com/neuroncore\n"
      "        ignoredByScheduler: false\n");
}

json RestrictedPod() {
  return {{"runAsNonRoot", true},
          {"runAsUser", 65532},
          {"runAsGroup", 65532},
          {"seccompProfile", {{"type", "RuntimeDefault"}}}};
}

json RestrictedContainer() {
  return {{"allowPrivilegeEscalation", false},
          {"readOnlyRootFilesystem", true},
          {"capabilities", {{"drop", {"ALL"}}}}};
}

json Deployment(const DeviceConfig& dc, const std::string& name, json pod) {
  AddPullSecret(dc, pod);
  json d = Object(dc, "apps/v1", "Deployment", name, Component::kScheduler);
  d["spec"] = {{"replicas", 1},
               {"selector", {{"matchLabels", SelectorLabels(name)}}},
               {"template", {{"metadata", {{"labels", PodLabels(name)}}}, {"spec", pod}}}};
  return d;
}

void AddBinding(const DeviceConfig& dc, const std::string& suffix, const char* role,
                const std::string& sa, std::vector<Child>& out) {
  json b = Object(dc, "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", ClusterName(dc, suffix),
                  Component::kScheduler, false);
  b["roleRef"] = {
      {"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", role}};
  b["subjects"] = json::array({{{"kind", "ServiceAccount"}, {"name", sa}, {"namespace", dc.ns}}});
  out.push_back({kClusterRoleBindings, std::move(b), Component::kScheduler});
}

void AddKubeScheduler(const DeviceConfig& dc, const OperatorSettings& s, std::vector<Child>& out) {
  const std::string name = SchedulerName(dc);
  const std::string config = dc.name + "-scheduler-config";
  json cm = Object(dc, "v1", "ConfigMap", config, Component::kScheduler);
  cm["data"] = {{"scheduler-config.yaml", SchedulerConfig(dc)}};
  out.push_back({k8s::resources::kConfigMaps, std::move(cm), Component::kScheduler});
  out.push_back({kSa, ServiceAccount(dc, name, Component::kScheduler), Component::kScheduler});
  // What any kube-scheduler needs, from the roles Kubernetes ships for it.
  AddBinding(dc, "kube-scheduler", "system:kube-scheduler", name, out);
  AddBinding(dc, "volume-scheduler", "system:volume-scheduler", name, out);
  // system:kube-scheduler may only get/update the lease named kube-scheduler: ours needs its own.
  json role = Object(dc, "rbac.authorization.k8s.io/v1", "Role", name + "-leader-election",
                     Component::kScheduler);
  role["rules"] = json::array(
      {{{"apiGroups", {"coordination.k8s.io"}}, {"resources", {"leases"}}, {"verbs", {"create"}}},
       {{"apiGroups", {"coordination.k8s.io"}},
        {"resources", {"leases"}},
        {"resourceNames", {name}},
        {"verbs", {"get", "update"}}}});
  out.push_back({kRoles, std::move(role), Component::kScheduler});
  json rb = Object(dc, "rbac.authorization.k8s.io/v1", "RoleBinding", name + "-leader-election",
                   Component::kScheduler);
  rb["roleRef"] = {{"apiGroup", "rbac.authorization.k8s.io"},
                   {"kind", "Role"},
                   {"name", name + "-leader-election"}};
  rb["subjects"] =
      json::array({{{"kind", "ServiceAccount"}, {"name", name}, {"namespace", dc.ns}}});
  out.push_back({kRoleBindings, std::move(rb), Component::kScheduler});

  const std::string image = dc.spec.custom_scheduler_image.empty() ? s.kube_scheduler_image
                                                                   : dc.spec.custom_scheduler_image;
  json container = {
      {"name", "kube-scheduler"},
      {"image", image},
      {"command",
       {"/usr/local/bin/kube-scheduler",
        "--config=/etc/kubernetes/neuron-scheduler/scheduler-config.yaml", "--v=2"}},
      {"livenessProbe",
       {{"httpGet", {{"path", "/livez"}, {"port", 10259}, {"scheme", "HTTPS"}}},
        {"initialDelaySeconds", 15}}},
      {"readinessProbe",
       {{"httpGet", {{"path", "/readyz"}, {"port", 10259}, {"scheme", "HTTPS"}}}}},
      {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}}}},
      {"securityContext", RestrictedContainer()},
      {"volumeMounts", json::array({{{"name", "config"},
                                     {"mountPath", "/etc/kubernetes/neuron-scheduler"},
                                     {"readOnly", true}},
                                    {{"name", "tmp"}, {"mountPath", "/tmp"}}})}};
  json pod = {{"serviceAccountName", name},
              {"priorityClassName", "system-cluster-critical"},
              {"securityContext", RestrictedPod()},
              {"containers", json::array({container})},
              {"volumes", json::array({{{"name", "config"}, {"configMap", {{"name", config}}}},
                                       {{"name", "tmp"}, {"emptyDir", json::object()}}})}};
  out.push_back({k8s::resources::kDeployments, Deployment(dc, name, pod), Component::kScheduler});
}

void AddExtender(const DeviceConfig& dc, std::vector<Child>& out) {
  const std::string name = ExtenderName(dc);
  out.push_back({kSa, ServiceAccount(dc, name, Component::kScheduler), Component::kScheduler});
  // Exactly what it calls: its view (nodes, pods), bind (patch pod annotations, pods/binding)
  // and Events on the pod.
  const json rules = json::array(
      {{{"apiGroups", {""}}, {"resources", {"nodes"}}, {"verbs", {"list", "watch"}}},
       {{"apiGroups", {""}}, {"resources", {"pods"}}, {"verbs", {"get", "list", "watch", "patch"}}},
       {{"apiGroups", {""}}, {"resources", {"pods/binding"}}, {"verbs", {"create"}}},
       {{"apiGroups", {""}}, {"resources", {"events"}}, {"verbs", {"create", "patch"}}}});
  AddClusterRole(dc, ClusterName(dc, "scheduler-extension"), rules, name, Component::kScheduler,
                 out);
  json svc = Object(dc, "v1", "Service", name, Component::kScheduler);
  svc["spec"] = {{"selector", SelectorLabels(name)},
                 {"ports", json::array({{{"name", "http"},
                                         {"port", kExtenderPort},
                                         {"targetPort", "http"},
                                         {"protocol", "TCP"}}})}};
  out.push_back({k8s::resources::kServices, std::move(svc), Component::kScheduler});
  json container = {
      {"name", "extender"},
      {"image", dc.spec.scheduler_extension_image},
      {"command", {"/usr/local/bin/neuron-scheduler-extender"}},
      {"args", {absl::StrCat("--listen=0.0.0.0:", kExtenderPort)}},
      {"ports",
       json::array({{{"name", "http"}, {"containerPort", kExtenderPort}, {"protocol", "TCP"}}})},
      {"livenessProbe", {{"httpGet", {{"path", "/healthz"}, {"port", "http"}}}}},
      {"readinessProbe", {{"httpGet", {{"path", "/readyz"}, {"port", "http"}}}}},
      {"resources",
       {{"requests", {{"cpu", "100m"}, {"memory", "64Mi"}}}, {"limits", {{"memory", "256Mi"}}}}},
      {"securityContext", RestrictedContainer()}};
  json pod = {{"serviceAccountName", name},
              {"priorityClassName", "system-cluster-critical"},
              {"securityContext", RestrictedPod()},
              {"containers", json::array({container})}};
  json d = Deployment(dc, name, pod);
  // One replica rebuilt from the API after a restart: never two with separate reservations.
  d["spec"]["strategy"] = {{"type", "Recreate"}};
  out.push_back({k8s::resources::kDeployments, std::move(d), Component::kScheduler});
}

}  // namespace

void AddScheduler(const DeviceConfig& dc, const OperatorSettings& s, std::vector<Child>& out) {
  AddExtender(dc, out);
  AddKubeScheduler(dc, s, out);
}

}  // namespace neuron::op::internal
