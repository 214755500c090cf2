// File: lib/operator/children.cc
#include "lib/operator/children.h"

#include "absl/strings/str_cat.h"
#include "lib/operator/children_internal.h"
#include "lib/topology/shapes.h"

namespace neuron::op {
namespace internal {

json Object(const DeviceConfig& dc, const char* api_version, const char* kind,
            const std::string& name, Component component, bool namespaced) {
  json meta = {{"name", name},
               {"labels",
                {{"app.kubernetes.io/part-of", "aws-neuron"},
                 {kManagedByLabel, kManagedByValue},
                 {kOwnerLabel, OwnerLabelValue(dc)},
                 {kComponentLabel, ComponentName(component)}}}};
  if (namespaced) {
    meta["namespace"] = dc.ns;
    const std::string version =
        dc.api_version.empty() ? absl::StrCat(kGroup, "/", kStorageVersion) : dc.api_version;
    meta["ownerReferences"] = json::array({{{"apiVersion", version},
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

void AddPullSecret(const DeviceConfig& dc, json& pod_spec) {
  if (dc.spec.image_repo_secret.empty()) return;
  pod_spec["imagePullSecrets"] = json::array({{{"name", dc.spec.image_repo_secret}}});
}

void PlaceOnNeuronNodes(const DeviceConfig& dc, json& pod_spec) {
  if (!dc.spec.selector.empty()) {
    pod_spec["nodeSelector"] = dc.spec.selector;
    return;
  }
  json shapes = json::array();
  for (const topology::Shape& s : topology::AllShapes()) shapes.push_back(s.instance_type);
  auto term = [](const std::string& key, json values) {
    return json{{"matchExpressions",
                 json::array({{{"key", key}, {"operator", "In"}, {"values", std::move(values)}}})}};
  };
  pod_spec["affinity"] = {
      {"nodeAffinity",
       {{"requiredDuringSchedulingIgnoredDuringExecution",
         {{"nodeSelectorTerms",
           json::array({term("feature.node.kubernetes.io/pci-1d0f.present", {"true"}),
                        term("feature.node.kubernetes.io/pci-0880_1d0f.present", {"true"}),
                        term("feature.node.kubernetes.io/aws-neuron", {"true"}),
                        term("node.kubernetes.io/instance-type", shapes),
                        term("aws.amazon.com/neuron-node", {"true"})})}}}}}};
}

json ServiceAccount(const DeviceConfig& dc, const std::string& name, Component component) {
  return Object(dc, "v1", "ServiceAccount", name, component);
}

std::string ClusterName(const DeviceConfig& dc, const std::string& suffix) {
  return absl::StrCat(dc.ns, "-", dc.name, "-", suffix);
}

void AddClusterRole(const DeviceConfig& dc, const std::string& name, const json& rules,
                    const std::string& sa, Component component, std::vector<Child>& out) {
  const k8s::ResourceRef roles{"rbac.authorization.k8s.io", "v1", "clusterroles", false};
  const k8s::ResourceRef bindings{"rbac.authorization.k8s.io", "v1", "clusterrolebindings", false};
  json role = Object(dc, "rbac.authorization.k8s.io/v1", "ClusterRole", name, component, false);
  role["rules"] = rules;
  out.push_back({roles, std::move(role), component});
  json binding =
      Object(dc, "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", name, component, false);
  binding["roleRef"] = {
      {"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", name}};
  binding["subjects"] =
      json::array({{{"kind", "ServiceAccount"}, {"name", sa}, {"namespace", dc.ns}}});
  out.push_back({bindings, std::move(binding), component});
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

std::vector<Component> DeletionOrder() {
  // Workloads that use the device first (node agent, plugin, DRA driver), then the scheduler
  // that places pods on it, then the NFD rule, and the driver last.
  return {Component::kMetrics,   Component::kDevicePlugin, Component::kDra,
          Component::kScheduler, Component::kNfd,          Component::kDriver};
}

std::vector<k8s::ResourceRef> ChildKinds(const ClusterApis& apis) {
  std::vector<k8s::ResourceRef> kinds = {
      k8s::resources::kDaemonSets,
      k8s::resources::kDeployments,
      k8s::resources::kServices,
      k8s::resources::kConfigMaps,
      {"", "v1", "serviceaccounts", true},
      {"rbac.authorization.k8s.io", "v1", "roles", true},
      {"rbac.authorization.k8s.io", "v1", "rolebindings", true},
      {"rbac.authorization.k8s.io", "v1", "clusterroles", false},
      {"rbac.authorization.k8s.io", "v1", "clusterrolebindings", false},
  };
  if (apis.kmm) kinds.push_back({"kmm.sigs.x-k8s.io", "v1beta1", "modules", true});
  if (apis.service_monitor)
    kinds.push_back({"monitoring.coreos.com", "v1", "servicemonitors", true});
  if (!apis.nfd_group.empty())
    kinds.push_back({apis.nfd_group, "v1alpha1", "nodefeaturerules", false});
  return kinds;
}

std::vector<Child> DesiredChildren(const DeviceConfig& dc, const ClusterApis& apis,
                                   const OperatorSettings& settings) {
  std::vector<Child> out;
  internal::AddNfdRule(dc, apis, out);
  if (dc.spec.driver_mode == DriverMode::kKmm) {
    internal::AddDriver(dc, apis, settings, out);
  } else if (!dc.DraMode()) {
    internal::AddPreinstalledPlugin(dc, settings, out);
  }
  if (dc.DraMode()) {
    internal::AddDra(dc, out);
  } else {
    internal::AddScheduler(dc, settings, out);
  }
  internal::AddMetrics(dc, apis, settings, out);
  return out;
}

}  // namespace neuron::op
