// File: lib/operator/children_scheduler.cc
// The Neuron-aware second kube-scheduler with our extender (neuron-scheduler-extender) as a
// second container of its pod, listening on loopback only: the KubeSchedulerConfiguration calls
// it on 127.0.0.1 for filter, prioritize, preempt and bind, and nothing outside the pod can (no
// Service: the extender binds pods with the pod's credentials). Two replicas, one leader.
// Mirrors deploy/scheduler/kube-scheduler.yaml (checked by deploy_scheduler_test) with names per
// DeviceConfig.
#include "absl/strings/str_cat.h"
#include "lib/operator/children_internal.h"

namespace neuron::op::internal {
namespace {

constexpr char kExtenderListen[] = "127.0.0.1:12345";
constexpr char kExtenderBinary[] = "/usr/local/bin/neuron-scheduler-extender";
constexpr int kSchedulerSecurePort = 10259;
constexpr char kConfigDir[] = "/etc/kubernetes/neuron-scheduler";
constexpr char kConfigKey[] = "neuron-scheduler-config.yaml";

// The Deployment, its ServiceAccount, and the leader-election Lease (in the DeviceConfig's
// namespace).
std::string SchedulerName(const DeviceConfig& dc) { return dc.name + "-custom-scheduler"; }

// See deploy/scheduler/kube-scheduler.yaml for why each extender field has its value.
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
      kExtenderListen,
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

// The extender, beside kube-scheduler in its pod. It serves on loopback only: kube-scheduler
// reaches it there, nothing outside the pod can (a person only through kubectl port-forward).
json ExtenderContainer(const DeviceConfig& dc) {
  // The kubelet's httpGet probes dial the pod IP, never loopback: the binary probes itself.
  auto probe = [](const char* path) {
    return json{{"exec",
                 {{"command",
                   {kExtenderBinary, absl::StrCat("--listen=", kExtenderListen),
                    absl::StrCat("--probe=", path)}}}}};
  };
  json readiness = probe("/readyz");  // ready once the Node and Pod lists are in its view
  readiness["periodSeconds"] = 2;
  json liveness = probe("/healthz");
  liveness["initialDelaySeconds"] = 10;
  liveness["periodSeconds"] = 10;
  return {{"name", "extender"},
          {"image", dc.spec.scheduler_extension_image},
          {"command", {kExtenderBinary}},
          {"args",
           {absl::StrCat("--listen=", kExtenderListen),
            // /bind refuses pods of any other scheduler profile.
            absl::StrCat("--scheduler-name=", SchedulerProfileName(dc)),
            // The scheduler's Lease: after a leader change its extender relists before answering.
            absl::StrCat("--leader-lease=", dc.ns, "/", SchedulerName(dc)), "--policy=binpack",
            "--log-json"}},
          {"readinessProbe", std::move(readiness)},
          {"livenessProbe", std::move(liveness)},
          // ~60 MiB synced at 5,000 nodes + 50,000 pods (bench/README.md); a full-Nodes request
          // needs several times its body while parsed.
          {"resources",
           {{"requests", {{"cpu", "500m"}, {"memory", "128Mi"}}}, {"limits", {{"memory", "1Gi"}}}}},
          {"securityContext", RestrictedContainerSecurity()}};
}

void AddKubeScheduler(const DeviceConfig& dc, const ClusterApis& apis, const OperatorSettings& s,
                      std::vector<Child>& out) {
  const std::string name = SchedulerName(dc);
  const std::string config = dc.name + "-scheduler-config";
  json cm = Object(dc, "v1", "ConfigMap", config, Component::kScheduler);
  cm["data"] = {{kConfigKey, SchedulerConfig(dc)}};
  out.push_back({k8s::resources::kConfigMaps, std::move(cm), Component::kScheduler});

  // One account for the pod: kube-scheduler's roles and the extender's.
  out.push_back(ServiceAccount(dc, name, Component::kScheduler));
  // The extender calls exactly this: list + watch Nodes and Pods (its view), create pods/binding
  // (the bind, which carries its annotations), and get a pod its watch has not shown yet. (It
  // reads the scheduler's Lease with the Role below.)
  const json rules = json::array(
      {{{"apiGroups", {""}}, {"resources", {"nodes"}}, {"verbs", {"list", "watch"}}},
       {{"apiGroups", {""}}, {"resources", {"pods"}}, {"verbs", {"get", "list", "watch"}}},
       {{"apiGroups", {""}}, {"resources", {"pods/binding"}}, {"verbs", {"create"}}}});
  AddClusterRole(dc, ClusterName(dc, "custom-scheduler-extender"), rules, name,
                 Component::kScheduler, out);
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
  // Scheduled by the default scheduler: this pod places the Neuron pods, so it must not depend
  // on itself to start (the seed had its extender scheduled by its own custom scheduler).
  json pod = {{"serviceAccountName", name},
              {"priorityClassName", "system-cluster-critical"},
              {"securityContext", RestrictedPodSecurity()},
              // Two replicas on two nodes where there are two: a node lost takes one at most.
              {"affinity",
               {{"podAntiAffinity",
                 {{"preferredDuringSchedulingIgnoredDuringExecution",
                   json::array({{{"weight", 100},
                                 {"podAffinityTerm",
                                  {{"labelSelector", {{"matchLabels", SelectorLabels(name)}}},
                                   {"topologyKey", "kubernetes.io/hostname"}}}}})}}}}},
              {"containers", json::array({std::move(container), ExtenderContainer(dc)})},
              {"volumes", json::array({{{"name", "config"}, {"configMap", {{"name", config}}}},
                                       {{"name", "tmp"}, {"emptyDir", json::object()}}})}};
  AddPullSecret(dc, pod);
  json d = Object(dc, "apps/v1", "Deployment", name, Component::kScheduler);
  d["metadata"]["labels"]["app.kubernetes.io/name"] = name;
  // Leader election: only the leader schedules; the standby's extender keeps its view warm, so
  // a failover (or a rolling update, the default strategy) waits on no relist from scratch.
  d["spec"] = {
      {"replicas", 2},
      {"selector", {{"matchLabels", SelectorLabels(name)}}},
      {"template", {{"metadata", {{"labels", PodLabels(name)}}}, {"spec", std::move(pod)}}}};
  out.push_back({k8s::resources::kDeployments, std::move(d), Component::kScheduler});
}

}  // namespace

void AddScheduler(const DeviceConfig& dc, const ClusterApis& apis, const OperatorSettings& s,
                  std::vector<Child>& out) {
  AddKubeScheduler(dc, apis, s, out);
}

}  // namespace neuron::op::internal
