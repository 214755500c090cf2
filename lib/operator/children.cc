// File: lib/operator/children.cc
// The child list of a DeviceConfig, and the metadata and pod-template helpers every component's
// builder shares (children_internal.h).
#include "lib/operator/children.h"

#include "absl/strings/str_cat.h"
#include "lib/operator/children_internal.h"
#include "lib/operator/device_config_emulation.h"
#include "lib/topology/shapes.h"

namespace neuron::op {
namespace internal {

k8s::ResourceRef NodeFeatureRules(const std::string& nfd_group) {
  return {nfd_group, "v1alpha1", "nodefeaturerules", false};
}

k8s::ResourceRef DeviceClasses(const std::string& version) {
  return {"resource.k8s.io", version, "deviceclasses", false};
}

std::string OwnerApiVersion(const DeviceConfig& dc) {
  const size_t slash = dc.api_version.rfind('/');
  std::string version =
      slash == std::string::npos ? dc.api_version : dc.api_version.substr(slash + 1);
  if (version.empty()) version = kStorageVersion;
  return absl::StrCat(kGroup, "/", version);
}

json Object(const DeviceConfig& dc, const std::string& api_version, const char* kind,
            const std::string& name, Component component, bool namespaced) {
  json meta = {{"name", name},
               {"labels",
                {{"app.kubernetes.io/part-of", "aws-neuron"},
                 {kManagedByLabel, kManagedByValue},
                 {kOwnerLabel, OwnerLabelValue(dc)},
                 {kComponentLabel, ComponentName(component)}}}};
  if (namespaced) {
    meta["namespace"] = dc.ns;
    // The garbage collector deletes namespaced children with their DeviceConfig even if the
    // operator is gone; blockOwnerDeletion makes a foreground delete wait for them.
    meta["ownerReferences"] = json::array({{{"apiVersion", OwnerApiVersion(dc)},
                                            {"kind", kKind},
                                            {"name", dc.name},
                                            {"uid", dc.uid},
                                            {"controller", true},
                                            {"blockOwnerDeletion", true}}});
  }
  return {{"apiVersion", api_version}, {"kind", kind}, {"metadata", std::move(meta)}};
}

json SelectorLabels(const std::string& name) { return {{"app.kubernetes.io/name", name}}; }

json PodLabels(const std::string& name) {
  return {{"app.kubernetes.io/name", name}, {"app.kubernetes.io/part-of", "aws-neuron"}};
}

json DaemonSet(const DeviceConfig& dc, const std::string& name, Component component, json pod) {
  AddPullSecret(dc, pod);
  json ds = Object(dc, "apps/v1", "DaemonSet", name, component);
  ds["metadata"]["labels"]["app.kubernetes.io/name"] = name;
  ds["spec"] = {
      {"selector", {{"matchLabels", SelectorLabels(name)}}},
      {"updateStrategy", {{"type", "RollingUpdate"}}},
      {"template", {{"metadata", {{"labels", PodLabels(name)}}}, {"spec", std::move(pod)}}}};
  return ds;
}

void AddPullSecret(const DeviceConfig& dc, json& pod_spec) {
  if (dc.spec.image_repo_secret.empty()) return;
  pod_spec["imagePullSecrets"] = json::array({{{"name", dc.spec.image_repo_secret}}});
}

void PlaceOnNeuronNodes(const DeviceConfig& dc, json& pod_spec) {
  if (!dc.spec.selector.empty()) pod_spec["nodeSelector"] = dc.spec.selector;
  if (dc.Emulated()) {  // the selected nodes (or all) but those with real Neuron devices
    AvoidNeuronNodes(dc, pod_spec);
    return;
  }
  if (!dc.spec.selector.empty()) return;
  json shapes = json::array();
  for (const topology::Shape& s : topology::AllShapes()) shapes.push_back(s.instance_type);
  auto term = [](const char* key, json values) {
    return json{{"matchExpressions",
                 json::array({{{"key", key}, {"operator", "In"}, {"values", std::move(values)}}})}};
  };
  // Any one term (they are ORed), as deploy/device-plugin/daemonset.yaml explains: NFD's PCI
  // label in either spelling (pci-0880_1d0f when only the class whitelist is extended), the
  // instance type, a label set by hand. Added here: aws-neuron, which our NodeFeatureRule makes
  // NFD set from its own PCI scan, so nothing of ours has to run on the node first.
  pod_spec["affinity"] = {
      {"nodeAffinity",
       {{"requiredDuringSchedulingIgnoredDuringExecution",
         {{"nodeSelectorTerms",
           json::array({term("feature.node.kubernetes.io/pci-1d0f.present", {"true"}),
                        term("feature.node.kubernetes.io/pci-0880_1d0f.present", {"true"}),
                        term("node.kubernetes.io/instance-type", shapes),
                        term("aws.amazon.com/neuron-node", {"true"}),
                        term("feature.node.kubernetes.io/aws-neuron", {"true"})})}}}}}};
}

void PlaceOnDriverNodes(const DeviceConfig& dc, const ClusterApis& apis, json& pod_spec) {
  if (dc.spec.driver_mode == DriverMode::kKmm && apis.kmm) {
    pod_spec["nodeSelector"] = {
        {absl::StrCat("kmm.node.kubernetes.io/", dc.ns, ".", dc.name, ".ready"), ""}};
  } else {
    PlaceOnNeuronNodes(dc, pod_spec);
  }
}

namespace {

// `expr` ANDed into every nodeSelectorTerm (terms are ORed); one term when there are none.
void AddToEveryTerm(json& pod_spec, const json& expr) {
  json& terms = pod_spec["affinity"]["nodeAffinity"]
                        ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
  if (!terms.is_array() || terms.empty()) {
    terms = json::array({{{"matchExpressions", json::array()}}});
  }
  for (json& t : terms) t["matchExpressions"].push_back(expr);
}

}  // namespace

void AvoidDraNodes(json& pod_spec) {
  // NotIn also matches nodes without the label: the device plugin is the default.
  AddToEveryTerm(pod_spec,
                 {{"key", kDraNodeLabel}, {"operator", "NotIn"}, {"values", {kDraNodeValue}}});
}

void RequireDraNodes(json& pod_spec) {
  AddToEveryTerm(pod_spec,
                 {{"key", kDraNodeLabel}, {"operator", "In"}, {"values", {kDraNodeValue}}});
}

json NeuronTolerations() {
  return json::array(
      {{{"key", "aws.amazon.com/neuron"}, {"operator", "Exists"}, {"effect", "NoSchedule"}},
       {{"key", "CriticalAddonsOnly"}, {"operator", "Exists"}}});
}

std::string KubeletPath(const DeviceConfig& dc, const char* sub) {
  return absl::StrCat(dc.spec.kubelet_root_dir, "/", sub);
}

json HostPathVolume(const char* name, const std::string& path, const char* type) {
  return {{"name", name}, {"hostPath", {{"path", path}, {"type", type}}}};
}

json FieldRefEnv(const char* name, const char* field_path) {
  return {{"name", name}, {"valueFrom", {{"fieldRef", {{"fieldPath", field_path}}}}}};
}

json NeuronOptVolume() {
  // Absent on nodes without the Neuron packages: created empty there, and the binaries fall
  // back to the chip's default LNC.
  return HostPathVolume("host-neuron-opt", kNeuronOptDir, "DirectoryOrCreate");
}

json NeuronOptMount() {
  return {{"name", "host-neuron-opt"},
          {"mountPath", absl::StrCat("/host", kNeuronOptDir)},
          {"readOnly", true}};
}

std::string ClusterName(const DeviceConfig& dc, const std::string& suffix) {
  return absl::StrCat(dc.ns, "-", dc.name, "-", suffix);
}

Child ServiceAccount(const DeviceConfig& dc, const std::string& name, Component component) {
  return {kServiceAccounts, Object(dc, "v1", "ServiceAccount", name, component), component};
}

void AddClusterRoleBinding(const DeviceConfig& dc, const std::string& name, const std::string& role,
                           const std::string& sa, Component component, std::vector<Child>& out) {
  json b = Object(dc, "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", name, component,
                  /*namespaced=*/false);
  b["roleRef"] = {
      {"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", role}};
  b["subjects"] = json::array({{{"kind", "ServiceAccount"}, {"name", sa}, {"namespace", dc.ns}}});
  out.push_back({kClusterRoleBindings, std::move(b), component});
}

void AddClusterRole(const DeviceConfig& dc, const std::string& name, const json& rules,
                    const std::string& sa, Component component, std::vector<Child>& out) {
  json role = Object(dc, "rbac.authorization.k8s.io/v1", "ClusterRole", name, component,
                     /*namespaced=*/false);
  role["rules"] = rules;
  out.push_back({kClusterRoles, std::move(role), component});
  AddClusterRoleBinding(dc, name, name, sa, component, out);
}

}  // namespace internal

const char* ComponentName(Component c) {
  switch (c) {
    case Component::kDriver:
      return "driver";
    case Component::kDevicePlugin:
      return "device-plugin";
    case Component::kScheduler:
      return "scheduler";
    case Component::kMetrics:
      return "metrics";
    case Component::kNfd:
      return "nfd";
    case Component::kDra:
      return "dra";
  }
  return "unknown";
}

std::string OwnerLabelValue(const DeviceConfig& dc) { return absl::StrCat(dc.ns, ".", dc.name); }

std::string SchedulerProfileName(const DeviceConfig& dc) {
  return dc.name == "neuron" ? "neuron-scheduler" : dc.name + "-neuron-scheduler";
}

std::vector<Component> DeletionOrder() {
  // What uses the devices first (node agent, plugin, DRA driver), then the scheduler that places
  // pods on them, then the NFD rule, and the driver last.
  return {Component::kMetrics,   Component::kDevicePlugin, Component::kDra,
          Component::kScheduler, Component::kNfd,          Component::kDriver};
}

std::vector<k8s::ResourceRef> ChildKinds(const ClusterApis& apis) {
  std::vector<k8s::ResourceRef> kinds = {
      k8s::resources::kDaemonSets, k8s::resources::kDeployments, k8s::resources::kServices,
      k8s::resources::kConfigMaps, internal::kServiceAccounts,   internal::kRoles,
      internal::kRoleBindings,     internal::kClusterRoles,      internal::kClusterRoleBindings,
  };
  if (apis.kmm) kinds.push_back(internal::kModules);
  if (apis.service_monitor) kinds.push_back(internal::kServiceMonitors);
  if (!apis.nfd_group.empty()) kinds.push_back(internal::NodeFeatureRules(apis.nfd_group));
  if (apis.DraServed()) kinds.push_back(internal::DeviceClasses(apis.dra_version));
  kinds.push_back(internal::kCsiDrivers);  // storage.k8s.io/v1 is served from Kubernetes 1.18
  return kinds;
}

std::vector<Child> DesiredChildren(const DeviceConfig& dc, const ClusterApis& apis,
                                   const OperatorSettings& settings) {
  std::vector<Child> out;
  internal::AddNfdRule(dc, apis, out);
  if (dc.spec.driver_mode == DriverMode::kKmm) {
    internal::AddDriver(dc, apis, out);  // the device plugin rides in the Module if it can
  }
  internal::AddPluginDaemonSet(dc, apis, out);
  if (dc.AwsDra()) internal::AddDra(dc, apis, out);
  if (dc.OurDra()) {
    internal::AddDraDriver(dc, apis, out);
    internal::AddDeviceClasses(dc, apis, out);
  }
  // kube-scheduler's DRA allocator places DRA pods; the second scheduler and the extender stay
  // for device-plugin nodes.
  if (dc.RunsDevicePlugin()) internal::AddScheduler(dc, apis, settings, out);
  internal::AddCsiDriver(dc, out);  // before the agent that serves it
  internal::AddMetrics(dc, apis, settings, out);
  return out;
}

}  // namespace neuron::op
