// File: lib/operator/device_config.h
// The DeviceConfig custom resource (k8s.aws, served as v1alpha1 and v1beta1 from one schema):
// its spec as the operator reads it, parsed from the API object, defaulted and validated.
// Validation names the field at fault in every error, so a condition can say what to fix.
// (The C++ namespace is `op`: `operator` is a keyword.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/operator/device_config_drain.h"
#include "nlohmann/json.hpp"

namespace neuron::op {

inline constexpr char kGroup[] = "k8s.aws";
inline constexpr char kKind[] = "DeviceConfig";
inline constexpr char kPlural[] = "deviceconfigs";
inline constexpr char kStorageVersion[] = "v1beta1";
inline constexpr char kFinalizer[] = "awslabs.node.kubernetes.io/deviceconfig-finalizer";

// `kmm`: the driver is built/loaded by a KMM Module that also runs the device plugin.
// `preinstalled`: the node image ships the driver (EKS Neuron AMIs); no Module, and the device
// plugin runs as the operator's own DaemonSet.
enum class DriverMode { kKmm, kPreinstalled };

// spec.allocation: how pods get Neuron devices. `devicePlugin`: our device plugin and the
// second scheduler with the extender (the default). `dra`: our DRA driver (devicePluginImage
// run as `neuron-device-plugin --api=dra`) on every selected node, placed by kube-scheduler's
// own DRA allocator. `mixed`: DRA on nodes labelled kDraNodeLabel=kDraNodeValue, the device
// plugin (and the extender) on the others. draDriverImage (AWS's driver) is a fourth, older way
// and excludes this field.
enum class Allocation { kDevicePlugin, kDra, kMixed };
const char* AllocationName(Allocation a);

// The node label that moves a node to DRA in `mixed` allocation.
inline constexpr char kDraNodeLabel[] = "neuron.aws.com/allocation";
inline constexpr char kDraNodeValue[] = "dra";

// spec.dra: our DRA driver's optional features (each needs its Kubernetes feature gate).
struct DraOptions {
  bool partitionable_devices = false;  // DRAPartitionableDevices: cores as partitions
  bool device_taints = false;          // DRADeviceTaints: health as device taints
  bool extended_resource = false;      // DRAExtendedResource: aws.amazon.com/neuron via DRA
};

// spec.upgradePolicy: how a driverVersion change rolls over the nodes (upgrade.h).
struct UpgradePolicy {
  int max_parallel = 1;                             // nodes upgrading at once
  absl::Duration node_timeout = absl::Minutes(15);  // one node's time to report the new driver
  bool paused = false;                              // start no node; finish those under way
  DrainPolicy drain;                                // device_config_drain.h
};

// spec.emulation: for clusters without Neuron hardware. The device plugin (or our DRA driver)
// and the node agent run with --emulate on every selected node without Neuron devices, and no
// driver is installed (driverMode reads as preinstalled: there is nothing to load).
struct Emulation {
  std::string instance_type;  // the shape every node pretends to be, e.g. trn1.32xlarge
  int lnc = 0;                // 0 = the family's default; 1 or 2 on trn2/trn3
};

// spec.compileCache: compiled-model caches (NeuronCache / ClusterNeuronCache, lib/cache). On by
// default: the node agent serves the CSI driver cache.neuron.aws.com and extracts caches under
// host_path; off leaves out the CSIDriver and the agent's cache flags, mounts and privilege.
struct CompileCache {
  bool enabled = true;
  std::string host_path = "/var/lib/neuron/cache";
};

struct DeviceConfigSpec {
  DriverMode driver_mode = DriverMode::kKmm;
  std::string drivers_image;
  std::string driver_version;
  std::string device_plugin_image;
  std::string custom_scheduler_image;
  std::string scheduler_extension_image;
  std::string dra_driver_image;  // AWS's DRA driver (the seed's DRA mode)
  Allocation allocation = Allocation::kDevicePlugin;
  bool allocation_set = false;  // spec.allocation was given (draDriverImage excludes it)
  DraOptions dra;
  bool dra_set = false;  // spec.dra was given (only with allocation dra or mixed)
  std::string node_metrics_image;
  std::string node_agent_image;   // ours; defaulted by the operator (OperatorSettings)
  std::string image_repo_secret;  // LocalObjectReference name; "" = none
  std::map<std::string, std::string> selector;  // equality match; empty = every node
  // The kubelet's --root-dir on the selected nodes: where device-plugin and DRA sockets, the
  // PodResources socket and the DRA checkpoint live (k0s, MicroK8s and others move it).
  std::string kubelet_root_dir = "/var/lib/kubelet";
  bool use_in_tree_drivers = false;  // upstream field; accepted, has no effect (see README)
  UpgradePolicy upgrade;
  std::optional<Emulation> emulation;  // set: the stack runs emulated
  CompileCache compile_cache;
};

// One problem with a spec: the JSON path of the field ("spec.selector") and what is wrong.
struct FieldError {
  std::string field;
  std::string message;
};

struct DeviceConfig {
  std::string api_version;  // as read: k8s.aws/v1alpha1 or k8s.aws/v1beta1
  std::string name;
  std::string ns;
  std::string uid;
  int64_t generation = 0;
  std::string resource_version;
  bool deleting = false;  // metadata.deletionTimestamp is set
  std::vector<std::string> finalizers;
  absl::Time creation_time;  // metadata.creationTimestamp (for "which came first")
  DeviceConfigSpec spec;
  // Fields of the wrong type or value found while parsing (reported by ValidateDeviceConfig).
  std::vector<FieldError> parse_problems;

  // AWS's DRA driver replaces the device plugin, scheduler and extender (spec.draDriverImage).
  bool AwsDra() const { return !spec.dra_driver_image.empty(); }
  // Our DRA driver runs (allocation dra or mixed).
  bool OurDra() const { return !AwsDra() && spec.allocation != Allocation::kDevicePlugin; }
  // Some DRA driver runs: resource.k8s.io must be served.
  bool DraMode() const { return AwsDra() || OurDra(); }
  // Our device plugin, the second scheduler and the extender run (on some nodes at least).
  bool RunsDevicePlugin() const { return !AwsDra() && spec.allocation != Allocation::kDra; }
  bool HasFinalizer() const;
  // The device plugin / DRA driver and the node agent run emulated (spec.emulation).
  bool Emulated() const { return spec.emulation.has_value(); }
};

// Reads the object (either served version). Only a structurally unusable object fails
// (InvalidArgument: not an object, no metadata.name); a wrong field type becomes a FieldError
// from Validate, never a crash. An absent or null spec reads as an empty one.
absl::StatusOr<DeviceConfig> ParseDeviceConfig(const nlohmann::json& obj);

// The longest DeviceConfig name the children can carry: their names are also Service names and
// label values (at most 63 characters). Set when the longest was the extender's own Deployment
// and Service, "<name>-custom-scheduler-extension"; kept since the extender moved into the
// scheduler's pod, so the CRD's rule and every name accepted before mean the same.
inline constexpr size_t kMaxNameLength = 36;

// Every problem with the object, parse problems first, then in field order. Empty = valid.
//  - metadata.name: a DNS-1035 label of at most kMaxNameLength; "<ns>.<name>" (the owner
//    label on every child) at most 63.
//  - Required images. v1alpha1: driversImage, devicePluginImage, customSchedulerImage and
//    schedulerExtensionImage (the seed's README). v1beta1 (and no apiVersion): nodeMetricsImage
//    (the seed's CRD). Either version: driversImage when driverMode is kmm, and
//    devicePluginImage unless draDriverImage is set (something must advertise the devices).
//  - The CEL rules: draDriverImage excludes the three plugin/scheduler images and
//    allocation/dra; devicePluginImage and schedulerExtensionImage are set together or not at
//    all, and customSchedulerImage (optional: the operator defaults it) only with them, except
//    in allocation dra, which runs no extender or scheduler (both must be unset); spec.dra only
//    with allocation dra or mixed. "" counts as unset, as in the CRD's rules.
//  - Every image set has no whitespace; in kmm mode driversImage ends in a tag.
//  - driverVersion (optional) is a label value; selector keys and values are label syntax;
//    imageRepoSecret.name is a Secret name; driverMode is kmm or preinstalled.
std::vector<FieldError> ValidateDeviceConfig(const DeviceConfig& dc);

// "spec.x: message; spec.y: message" for a condition message; past about 4 KiB the rest is
// counted ("; and 12 more"). Quoted user text in the errors is already cut short.
std::string JoinFieldErrors(const std::vector<FieldError>& errors);

// Whether `labels` (a Node's) match the equality selector (empty selector matches all).
bool SelectorMatches(const std::map<std::string, std::string>& selector,
                     const nlohmann::json& labels);

}  // namespace neuron::op
