// File: lib/operator/children_scheduler.cc
// The Neuron-aware second kube-scheduler and our extender (neuron-scheduler-extender) behind a
// Service: the scheduler's KubeSchedulerConfiguration calls the extender for filter, prioritize,
// preempt and bind. Mirrors deploy/scheduler/ (checked by deploy_scheduler_test) with names
// per DeviceConfig.
#include "absl/strings/str_cat.h"
#include "lib/operator/children_internal.h"

namespace neuron::op::internal {
namespace {

constexpr int kExtenderPort = 12345;
constexpr int kSchedulerSecurePort = 10259;
constexpr char kConfigDir[] = "/etc/kubernetes/neuron-scheduler";
constexpr char kConfigKey[] = "neuron-scheduler-config.yaml";

std::string SchedulerName(const DeviceConfig& dc) { return dc.name + "-custom-scheduler"; }
std::string ExtenderName(const DeviceConfig& dc) { return dc.name + "-custom-scheduler-extension"; }

// See deploy/scheduler/kube-scheduler.yaml for why each extender field has its value. The
// leader-election Lease is named after the Deployment, in the DeviceConfig's namespace.
std::string SchedulerConfig(const DeviceConfig& dc) {
  return absl::StrCat(  //
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n"
      "leaderElection:\n"
      "  leaderElect: true\n"
      "  resourceName: ",
      SchedulerName(dc),
      "\n"
      "  resourceNamespace: ",
      dc.ns,
      "\n"
      "profiles:\n"
      "  - schedulerName: ",
      SchedulerProfileName(dc),
      "\n"
      "extenders:\n"
      "  - urlPrefix: http://",
      ExtenderName(dc), ".", dc.ns, ".svc:", kExtenderPort,
      "\n"
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

// The spec's image, else the upstream kube-scheduler of the API server's own version: the skew
// policy allows no scheduler newer than the API server, and a matching one is the supported case.
std::string KubeSchedulerImageOf(const DeviceConfig& dc, const ClusterApis& apis,
                                 const OperatorSettings& s) {
  if (!dc.spec.custom_scheduler_image.empty()) return dc.spec.custom_scheduler_image;
  if (apis.server_version) return KubeSchedulerImage(*apis.server_version);
  return s.kube_scheduler_image;
}

json RestrictedPodSecurity() {
  return {{"runAsNonRoot", true},
          {"runAsUser", 65532},
          {"runAsGroup", 65532},
          {"seccompProfile", {{"type", "RuntimeDefault"}}}};
}

json RestrictedContainerSecurity() {
  return {{"allowPrivilegeEscalation", false},
          {"readOnlyRootFilesystem", true},
          {"capabilities", {{"drop", {"ALL"}}}}};
}

json Deployment(const DeviceConfig& dc, const std::string& name, json pod) {
  AddPullSecret(dc, pod);
  json d = Object(dc, "apps/v1", "Deployment", name, Component::kScheduler);
  d["metadata"]["labels"]["app.kubernetes.io/name"] = name;
  d["spec"] = {
      {"replicas", 1},
      {"selector", {{"matchLabels", SelectorLabels(name)}}},
      {"template", {{"metadata", {{"labels", PodLabels(name)}}}, {"spec", std::move(pod)}}}};
  return d;
}

void AddExtender(const DeviceConfig& dc, std::vector<Child>& out) {
  const std::string name = ExtenderName(dc);
  out.push_back(ServiceAccount(dc, name, Component::kScheduler));
  // Exactly what it calls: list + watch Nodes and Pods (its view), create pods/binding (the
  // bind, which carries its annotations), and get a pod its watch has not shown yet.
  const json rules = json::array(
      {{{"apiGroups", {""}}, {"resources", {"nodes"}}, {"verbs", {"list", "watch"}}},
       {{"apiGroups", {""}}, {"resources", {"pods"}}, {"verbs", {"get", "list", "watch"}}},
       {{"apiGroups", {""}}, {"resources", {"pods/binding"}}, {"verbs", {"create"}}}});
  AddClusterRole(dc, ClusterName(dc, "scheduler-extension"), rules, name, Component::kScheduler,
                 out);

  json svc = Object(dc, "v1", "Service", name, Component::kScheduler);
  svc["metadata"]["labels"]["app.kubernetes.io/name"] = name;
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
      {"args",
       {absl::StrCat("--listen=0.0.0.0:", kExtenderPort), "--policy=binpack", "--log-json"}},
      {"ports",
       json::array({{{"name", "http"}, {"containerPort", kExtenderPort}, {"protocol", "TCP"}}})},
      // Ready once the Node and Pod lists are in its view.
      {"readinessProbe",
       {{"httpGet", {{"path", "/readyz"}, {"port", "http"}}}, {"periodSeconds", 2}}},
      {"livenessProbe",
       {{"httpGet", {{"path", "/healthz"}, {"port", "http"}}},
        {"initialDelaySeconds", 10},
        {"periodSeconds", 10}}},
      // ~60 MiB synced at 5,000 nodes + 50,000 pods (bench/README.md); a full-Nodes request
      // needs several times its body while parsed.
      {"resources",
       {{"requests", {{"cpu", "500m"}, {"memory", "128Mi"}}}, {"limits", {{"memory", "1Gi"}}}}},
      {"securityContext", RestrictedContainerSecurity()}};
  // Scheduled by the default scheduler: the Neuron scheduler calls this pod, so it must not
  // depend on it to start (the seed had it scheduled by its own custom scheduler).
  json pod = {{"serviceAccountName", name},
              {"priorityClassName", "system-cluster-critical"},
              {"securityContext", RestrictedPodSecurity()},
              {"containers", json::array({std::move(container)})}};
  json d = Deployment(dc, name, std::move(pod));
  // One view, one set of in-memory bind reservations: never two replicas at once.
  d["spec"]["strategy"] = {{"type", "Recreate"}};
  out.push_back({k8s::resources::kDeployments, std::move(d), Component::kScheduler});
}

void AddKubeScheduler(const DeviceConfig& dc, const ClusterApis& apis, const OperatorSettings& s,
                      std::vector<Child>& out) {
  const std::string name = SchedulerName(dc);
  const std::string config = dc.name + "-scheduler-config";
  json cm = Object(dc, "v1", "ConfigMap", config, Component::kScheduler);
  cm["data"] = {{kConfigKey, SchedulerConfig(dc)}};
  out.push_back({k8s::resources::kConfigMaps, std::move(cm), Component::kScheduler});

  out.push_back(ServiceAccount(dc, name, Component::kScheduler));
  // What every kube-scheduler needs: the roles Kubernetes ships for it. Left out from
  // deploy/'s set: the RoleBinding to extension-apiserver-authentication-reader, which lives in
  // kube-system (no owner of ours can be there, nor can the operator prune it); kube-scheduler
  // tolerates failing that lookup, and its probe paths need no authentication.
  AddClusterRoleBinding(dc, ClusterName(dc, "kube-scheduler"), "system:kube-scheduler", name,
                        Component::kScheduler, out);
  AddClusterRoleBinding(dc, ClusterName(dc, "volume-scheduler"), "system:volume-scheduler", name,
                        Component::kScheduler, out);
  // system:kube-scheduler covers only the Lease named kube-scheduler: ours needs its own.
  const std::string lease_role = name + "-leader-election";
  json role = Object(dc, "rbac.authorization.k8s.io/v1", "Role", lease_role, Component::kScheduler);
  role["rules"] = json::array(
      {{{"apiGroups", {"coordination.k8s.io"}}, {"resources", {"leases"}}, {"verbs", {"create"}}},
       {{"apiGroups", {"coordination.k8s.io"}},
        {"resources", {"leases"}},
        {"resourceNames", {name}},
        {"verbs", {"get", "update"}}}});
  out.push_back({kRoles, std::move(role), Component::kScheduler});
  json binding =
      Object(dc, "rbac.authorization.k8s.io/v1", "RoleBinding", lease_role, Component::kScheduler);
  binding["roleRef"] = {
      {"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", lease_role}};
  binding["subjects"] =
      json::array({{{"kind", "ServiceAccount"}, {"name", name}, {"namespace", dc.ns}}});
  out.push_back({kRoleBindings, std::move(binding), Component::kScheduler});

  json command = {"/usr/local/bin/kube-scheduler",
                  absl::StrCat("--config=", kConfigDir, "/", kConfigKey), "--v=2"};
  // Where resource.k8s.io/v1 is not served, a DRA-enabled scheduler would wait on informers for
  // it (the seed passes this flag then). Only then: from v1.35 the gate is locked on.
  if (apis.dra_version != "v1") {
    command.push_back("--feature-gates=DynamicResourceAllocation=false");
  }
  auto probe = [](const char* path) {
    return json{{"httpGet", {{"path", path}, {"port", kSchedulerSecurePort}, {"scheme", "HTTPS"}}}};
  };
  json liveness = probe("/livez");
  liveness["initialDelaySeconds"] = 15;
  json container = {
      {"name", "kube-scheduler"},
      {"image", KubeSchedulerImageOf(dc, apis, s)},
      {"command", std::move(command)},
      {"livenessProbe", std::move(liveness)},
      {"readinessProbe", probe("/readyz")},
      {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}}}},
      {"securityContext", RestrictedContainerSecurity()},
      {"volumeMounts",
       json::array({{{"name", "config"}, {"mountPath", kConfigDir}, {"readOnly", true}},
                    // The root filesystem is read-only: scratch space for the binary.
                    {{"name", "tmp"}, {"mountPath", "/tmp"}}})}};
  json pod = {{"serviceAccountName", name},
              {"priorityClassName", "system-cluster-critical"},
              {"securityContext", RestrictedPodSecurity()},
              {"containers", json::array({std::move(container)})},
              {"volumes", json::array({{{"name", "config"}, {"configMap", {{"name", config}}}},
                                       {{"name", "tmp"}, {"emptyDir", json::object()}}})}};
  out.push_back(
      {k8s::resources::kDeployments, Deployment(dc, name, std::move(pod)), Component::kScheduler});
}

}  // namespace

void AddScheduler(const DeviceConfig& dc, const ClusterApis& apis, const OperatorSettings& s,
                  std::vector<Child>& out) {
  AddExtender(dc, out);  // first, so the scheduler's first calls find its Service
  AddKubeScheduler(dc, apis, s, out);
}

}  // namespace neuron::op::internal
