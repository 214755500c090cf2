// The ResourceSlices one node publishes for driver neuron.aws.com (resource.k8s.io/v1), as data.
// Pure: the caller supplies what sysfs and the node said; resource_slice_json.h renders it.
//
// Pool = node name; devices neurondevice<N> with AWS's attribute names (see names.h,
// device_groups.h). Options:
//   partitionable (gate DRAPartitionableDevices): each device also gets a counter set
//     "neurondevice<N>-cores" with counter "cores" = its logical cores, consumed whole by the
//     device and 1 per core by per-core partitions neurondevice<N>-core<M>, so a device and its
//     cores are never allocated twice. Partitions carry resourceType neuron_core and no
//     devicegroup attributes: AWS's templates (count N + matchAttribute devicegroupN_id) can
//     never be satisfied with cores. The API wants counters in the slice of their consumers,
//     at most 128 devices and 32 counters per slice: the pool is split into several slices.
//   device_taints (gate DRADeviceTaints): unhealthy devices (and their partitions) are published
//     with a taint neuron.aws.com/unhealthy=<reason>; without the gate they are left out.
//
// UltraServer nodes (NodeDeviceInfo::ultraserver set) also publish one device "neuronnode",
// resourceType neuron_node, that stands for the whole node (AWS's UltraServer templates claim it
// with an UltraServerConfig; node_device.h lists its attributes). It must never be held together
// with any of the node's devices or partitions:
//   partitionable on, and the whole pool fits one slice (trn2u at LNC 2: 16 devices + 64 cores +
//     the node device): it consumes every device's whole counter set, so the scheduler itself
//     keeps the node device and the devices apart;
//   otherwise (gate off: the API server drops counters; or LNC 1 with partitions, 144 devices,
//     more than one slice holds, and counters only count within their slice): no counters; the
//     scheduler may allocate both, and NodePrepareResources refuses whichever claim comes second
//     while the other is prepared (neuron_preparer.h), so its pod waits with that error in its
//     events until the other claim is unprepared.
// The node device shares the fate of every device: hidden when one is hidden, tainted (the
// worst effect) when one is tainted.
//
// Every device also carries networkNodeLayer1..3 when the node's labels give them
// (node_labels.h).
#ifndef NEURON_LIB_DRA_RESOURCE_SLICE_H_
#define NEURON_LIB_DRA_RESOURCE_SLICE_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/topology/shapes.h"
#include "lib/ultraserver/identity.h"

namespace neuron::dra {

// A device attribute: exactly one of the four API value kinds.
struct AttributeValue {
  enum class Kind { kInt, kBool, kString, kVersion };
  Kind kind = Kind::kString;
  int64_t int_value = 0;
  bool bool_value = false;
  std::string text;  // kString, kVersion

  static AttributeValue Int(int64_t v) { return {Kind::kInt, v, false, ""}; }
  static AttributeValue Bool(bool v) { return {Kind::kBool, 0, v, ""}; }
  static AttributeValue String(std::string v) { return {Kind::kString, 0, false, std::move(v)}; }
  static AttributeValue Version(std::string v) { return {Kind::kVersion, 0, false, std::move(v)}; }
  bool operator==(const AttributeValue&) const = default;
};

enum class TaintEffect { kNoSchedule, kNoExecute };

struct DeviceTaint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;
  absl::Time time_added = absl::InfinitePast();  // InfinitePast: left to the API server
};

struct CounterConsumption {
  std::string counter_set;
  std::map<std::string, int64_t> counters;
};

struct SliceDevice {
  std::string name;
  // Keys unqualified (driver domain, neuron.aws.com) or "<domain>/<name>".
  std::map<std::string, AttributeValue> attributes;
  std::map<std::string, int64_t> capacity;
  std::vector<CounterConsumption> consumes_counters;
  std::vector<DeviceTaint> taints;
};

struct CounterSet {
  std::string name;
  std::map<std::string, int64_t> counters;
};

struct ResourceSliceModel {
  std::string name;  // metadata.name
  std::string driver;
  std::string node_name;
  std::string pool_name;
  int64_t pool_generation = 1;
  int64_t resource_slice_count = 1;
  std::vector<SliceDevice> devices;
  std::vector<CounterSet> shared_counters;
};

struct DeviceHealth {
  bool healthy = true;
  std::string reason;  // why not ("NC_UNCORRECTABLE_ERROR"); made a label value
  bool evict = false;  // NoExecute instead of NoSchedule: running pods must leave
  absl::Time since = absl::InfinitePast();
};

struct SliceOptions {
  bool partitionable = false;  // gate DRAPartitionableDevices
  bool device_taints = false;  // gate DRADeviceTaints
  int64_t pool_generation = 1;
};

struct NodeDeviceInfo {
  std::string node_name;
  const topology::Shape* shape = nullptr;  // e.g. FindShape("trn2.48xlarge")
  int lnc = 0;                             // 0 = the family's default
  std::string neuron_driver_version;       // "2.24.7.0"
  std::string dra_driver_version;          // ours
  std::map<int, DeviceHealth> health;      // device index -> health; absent = healthy
  std::map<int, std::string> efa_bdfs;     // device index -> paired EFA PCI address (optional)
  // The node's place in its UltraServer (lib/ultraserver); nullopt = not an UltraServer node.
  std::optional<ultraserver::Identity> ultraserver;
  // EC2 instance topology, network node layers 1..3 from the Node's labels; "" = unknown.
  std::array<std::string, 3> network_node_layers;
};

// InvalidArgument for a missing shape or node name, an LNC the family does not support, or an
// empty version string.
absl::StatusOr<std::vector<ResourceSliceModel>> BuildResourceSlices(const NodeDeviceInfo& node,
                                                                    const SliceOptions& options);

}  // namespace neuron::dra

#endif  // NEURON_LIB_DRA_RESOURCE_SLICE_H_
