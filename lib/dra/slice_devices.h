// Builds the entries of one node's ResourceSlices: whole devices, their per-core partitions and
// health taints. Internal to resource_slice.cc; separate so each stays short.
#ifndef NEURON_LIB_DRA_SLICE_DEVICES_H_
#define NEURON_LIB_DRA_SLICE_DEVICES_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/dra/device_groups.h"
#include "lib/dra/resource_slice.h"
#include "lib/topology/node_topology.h"

namespace neuron::dra::internal {

// What every device of the node shares.
struct NodeContext {
  const NodeDeviceInfo* node;
  topology::NodeTopology topology;
  DeviceGroups groups;
  bool partitionable;
};

// What every device of the node carries: instanceType, the driver versions and the network node
// layers the node's labels give.
std::map<std::string, AttributeValue> NodeAttributes(const NodeContext& ctx);

SliceDevice WholeDevice(const NodeContext& ctx, int device);
std::vector<SliceDevice> CorePartitions(const NodeContext& ctx, int device);
CounterSet DeviceCounterSet(const NodeContext& ctx, int device);

// The taint an unhealthy device carries; nullopt when healthy.
std::optional<DeviceTaint> UnhealthyTaint(const DeviceHealth& health);

// A Kubernetes label value (taint values must be one): invalid characters become '_', at most
// 63 characters, starting and ending with an alphanumeric; "" when nothing is left.
std::string LabelValue(std::string_view text);

}  // namespace neuron::dra::internal

#endif  // NEURON_LIB_DRA_SLICE_DEVICES_H_
