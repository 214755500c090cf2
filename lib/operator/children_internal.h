// File: lib/operator/children_internal.h
// What the child builders share: object metadata (labels, the controller ownerReference),
// pod-template pieces (pull secret, placement on Neuron nodes, tolerations, host paths), RBAC
// helpers, and one entry point per component (each in its own children_<component>.cc).
#pragma once

#include <string>
#include <vector>

#include "lib/k8s/resource.h"
#include "lib/operator/children.h"
#include "nlohmann/json.hpp"

namespace neuron::op::internal {

using nlohmann::json;

inline const k8s::ResourceRef kServiceAccounts{"", "v1", "serviceaccounts", true};
inline const k8s::ResourceRef kRoles{"rbac.authorization.k8s.io", "v1", "roles", true};
inline const k8s::ResourceRef kRoleBindings{"rbac.authorization.k8s.io", "v1", "rolebindings",
                                            true};
inline const k8s::ResourceRef kClusterRoles{"rbac.authorization.k8s.io", "v1", "clusterroles",
                                            false};
inline const k8s::ResourceRef kClusterRoleBindings{"rbac.authorization.k8s.io", "v1",
                                                   "clusterrolebindings", false};
inline const k8s::ResourceRef kModules{"kmm.sigs.x-k8s.io", "v1beta1", "modules", true};
inline const k8s::ResourceRef kServiceMonitors{"monitoring.coreos.com", "v1", "servicemonitors",
                                               true};
inline const k8s::ResourceRef kCsiDrivers{"storage.k8s.io", "v1", "csidrivers", false};
k8s::ResourceRef NodeFeatureRules(const std::string& nfd_group);
// resource.k8s.io/<version> deviceclasses (the version discovery found: ClusterApis).
k8s::ResourceRef DeviceClasses(const std::string& version);

// "k8s.aws/<version>" of the DeviceConfig as it was read (v1alpha1 or v1beta1).
std::string OwnerApiVersion(const DeviceConfig& dc);

// apiVersion, kind and metadata of a child: the common labels always; namespaced children live
// in dc.ns with the controller ownerReference, cluster-scoped ones get no ownerReference.
json Object(const DeviceConfig& dc, const std::string& api_version, const char* kind,
            const std::string& name, Component component, bool namespaced = true);

// Labels that select the pods of workload `name` (its selector, and its Service's).
json SelectorLabels(const std::string& name);
// Pod template labels: the selector labels plus part-of.
json PodLabels(const std::string& name);

// A DaemonSet `name` running `pod` (pull secret added; placement is the caller's).
json DaemonSet(const DeviceConfig& dc, const std::string& name, Component component, json pod);

// spec.imageRepoSecret as imagePullSecrets on a pod spec.
void AddPullSecret(const DeviceConfig& dc, json& pod_spec);
// Node-level pods: spec.selector as nodeSelector, or (empty selector) deploy/'s affinity for
// any node that looks like a Neuron node.
void PlaceOnNeuronNodes(const DeviceConfig& dc, json& pod_spec);
// Pods that need the Neuron driver loaded: in kmm mode (KMM served) the nodes where KMM reports
// the Module ready (its label, as the seed selects), else PlaceOnNeuronNodes.
void PlaceOnDriverNodes(const DeviceConfig& dc, const ClusterApis& apis, json& pod_spec);
// Mixed allocation: the device plugin stays off nodes labelled kDraNodeLabel=kDraNodeValue,
// and the DRA driver runs only there. Added to whatever placement the pod already has.
void AvoidDraNodes(json& pod_spec);
void RequireDraNodes(json& pod_spec);
// Node-level pods tolerate the taint Neuron node groups usually carry.
json NeuronTolerations();

json HostPathVolume(const char* name, const std::string& path, const char* type = "Directory");
// `sub` under the node's kubelet root (spec.kubeletRootDir), e.g. "plugins_registry". Mounted at
// the same path in the container: a DRA plugin registers its socket as a path on the host.
std::string KubeletPath(const DeviceConfig& dc, const char* sub);
// Directories under the kubelet root: its plugin registration sockets, DRA plugins' own sockets,
// and PodResources' socket (mounted whole: the kubelet recreates the socket).
inline constexpr char kRegistryDir[] = "plugins_registry";
inline constexpr char kPluginsDir[] = "plugins";
inline constexpr char kPodResourcesDir[] = "pod-resources";
// Where the DRA driver writes CDI specs for containerd and CRI-O to read.
inline constexpr char kCdiDir[] = "/var/run/cdi";
json FieldRefEnv(const char* name, const char* field_path);

// Where the Neuron tools keep the node's Logical NeuronCore config (EKS user data writes
// logical_nc_config there); the agent and the plugin read it under --host-root.
inline constexpr char kNeuronOptDir[] = "/opt/aws/neuron";
json NeuronOptVolume();
json NeuronOptMount();

// Cluster-scoped names carry the namespace: DeviceConfigs of one name in two namespaces must not
// share a ClusterRole.
std::string ClusterName(const DeviceConfig& dc, const std::string& suffix);

Child ServiceAccount(const DeviceConfig& dc, const std::string& name, Component component);
// A ClusterRole `name` with `rules`, and a ClusterRoleBinding of it to service account `sa`.
void AddClusterRole(const DeviceConfig& dc, const std::string& name, const json& rules,
                    const std::string& sa, Component component, std::vector<Child>& out);
// A ClusterRoleBinding `name` of an existing ClusterRole `role` to service account `sa`.
void AddClusterRoleBinding(const DeviceConfig& dc, const std::string& name, const std::string& role,
                           const std::string& sa, Component component, std::vector<Child>& out);

// One per component, each appending its objects in apply order (accounts and RBAC first).
void AddDriver(const DeviceConfig& dc, const ClusterApis& apis, std::vector<Child>& out);
// Our device plugin as the operator's own DaemonSet: in driverMode preinstalled, and in mixed
// allocation (a KMM Module's equality selector cannot keep it off the DRA nodes).
void AddPluginDaemonSet(const DeviceConfig& dc, const ClusterApis& apis, std::vector<Child>& out);
void AddScheduler(const DeviceConfig& dc, const ClusterApis& apis, const OperatorSettings& s,
                  std::vector<Child>& out);
void AddMetrics(const DeviceConfig& dc, const ClusterApis& apis, const OperatorSettings& s,
                std::vector<Child>& out);
void AddNfdRule(const DeviceConfig& dc, const ClusterApis& apis, std::vector<Child>& out);
// AWS's DRA driver (spec.draDriverImage).
void AddDra(const DeviceConfig& dc, const ClusterApis& apis, std::vector<Child>& out);
// Ours (allocation dra or mixed): its account, ClusterRole and DaemonSet; and the DeviceClasses.
void AddDraDriver(const DeviceConfig& dc, const ClusterApis& apis, std::vector<Child>& out);
// spec.compileCache (children_cache.cc): the CSIDriver; the node agent's rules over the cache
// API; its flags, privilege, mounts and grace period on the agent's pod spec (one container).
// Each does nothing when compileCache is disabled (the rules are the caller's to leave out).
void AddCsiDriver(const DeviceConfig& dc, std::vector<Child>& out);
json CacheAgentRules();
void AddCacheToAgent(const DeviceConfig& dc, const OperatorSettings& s, json& pod);
void AddDeviceClasses(const DeviceConfig& dc, const ClusterApis& apis, std::vector<Child>& out);

}  // namespace neuron::op::internal
