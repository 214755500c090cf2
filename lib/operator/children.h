// File: lib/operator/children.h
// Everything a DeviceConfig turns into, as pure functions: the desired objects for one
// DeviceConfig on a cluster with given optional APIs. No I/O: the reconciler applies exactly
// this list with server-side apply, and `neuron-operator render` prints it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/k8s/resource.h"
#include "lib/operator/device_config.h"
#include "lib/operator/kube_version.h"
#include "nlohmann/json.hpp"

namespace neuron::op {

// Optional APIs the cluster serves (from discovery), and its version. Nothing here is required
// on plain Kubernetes: what is missing is reported as a condition, and its objects are left out.
struct ClusterApis {
  bool kmm = true;                            // kmm.sigs.x-k8s.io/v1beta1 modules
  std::string nfd_group = "nfd.k8s-sigs.io";  // or "nfd.openshift.io"; "" = NFD not served
  bool service_monitor = false;               // monitoring.coreos.com/v1 servicemonitors
  // The resource.k8s.io version DRA objects (DeviceClasses) are written at: "v1" where served
  // (Kubernetes 1.34+), else "v1beta1" (1.32, 1.33); "" = DRA is not served.
  std::string dra_version;
  bool DraServed() const { return !dra_version.empty(); }
  // The API server's version (GET /version); unset where unknown (render, without a cluster).
  // The default kube-scheduler image follows it.
  std::optional<KubeVersion> server_version;
};

// Operator-wide settings that are not in the spec.
struct OperatorSettings {
  std::string ns = "aws-neuron-operator";  // OPERATOR_NAMESPACE
  std::string field_manager = "neuron-operator";
  std::string default_node_agent_image = "neuron-node-agent:dev";  // images/, make images
  // The second kube-scheduler when neither spec.customSchedulerImage nor the API server's
  // version (ClusterApis::server_version) says which.
  std::string kube_scheduler_image = "registry.k8s.io/kube-scheduler:v1.32.3";
};

// Which part of the stack an object belongs to (status is reported per component).
enum class Component { kDriver, kDevicePlugin, kScheduler, kMetrics, kNfd, kDra };
const char* ComponentName(Component c);

struct Child {
  k8s::ResourceRef ref;
  nlohmann::json object;  // apiVersion, kind, metadata (name, namespace, labels, ownerRefs)
  Component component;
};

// Labels on every child: app.kubernetes.io/managed-by=neuron-operator and
// k8s.aws/deviceconfig=<ns>.<name>. Cluster-scoped children (ClusterRole[Binding],
// NodeFeatureRule) carry the label but no ownerReference: a namespaced owner is invalid for a
// cluster-scoped dependent, so the operator deletes those itself.
inline constexpr char kOwnerLabel[] = "k8s.aws/deviceconfig";
inline constexpr char kManagedByLabel[] = "app.kubernetes.io/managed-by";
inline constexpr char kManagedByValue[] = "neuron-operator";
// Which Component an object belongs to (ComponentName), for staged deletion.
inline constexpr char kComponentLabel[] = "k8s.aws/component";
std::string OwnerLabelValue(const DeviceConfig& dc);

// The schedulerName pods set to be placed by this DeviceConfig's Neuron scheduler:
// "neuron-scheduler" for a DeviceConfig named neuron, else "<name>-neuron-scheduler".
std::string SchedulerProfileName(const DeviceConfig& dc);

// The desired objects in apply order (RBAC and config before the workloads that use them).
// `dc` must be valid (ValidateDeviceConfig empty). Objects whose API is not served are left
// out. Namespaced children live in dc.ns and carry a controller ownerReference to `dc`.
std::vector<Child> DesiredChildren(const DeviceConfig& dc, const ClusterApis& apis,
                                   const OperatorSettings& settings);

// The order in which a deleting DeviceConfig's children go: metrics and plugin before the
// driver Module (the plugin holds /dev/neuron*, so modprobe -r would fail under it).
std::vector<Component> DeletionOrder();

// ResourceRefs of every kind DesiredChildren can produce (for pruning and cleanup), with the
// NFD group of `apis`.
std::vector<k8s::ResourceRef> ChildKinds(const ClusterApis& apis);

}  // namespace neuron::op
