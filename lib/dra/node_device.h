// File: lib/dra/node_device.h
// The device an UltraServer node publishes for itself, "neuronnode" with resourceType
// neuron_node (AWS's UltraServer templates claim it, count 1, with an UltraServerConfig). Its
// attributes, all in the driver's domain neuron.aws.com:
//   resourceType         "neuron_node"
//   instanceType, neuronDriverVersion, draDriverVersion, networkNodeLayer1..3   as every device
//   ultraserverModes     the runtime modes the node supports, as the node label
//                        neuron.amazonaws.com/ultraserver-mode spells them ("1_2_4")
//   ultraserverServerId2 / ultraserverServerId4   (string) the set of 2 / 4 nodes it belongs to,
//                        equal on every node of the set (label ultraserver-server-id-N)
//   ultraserverNodeId2 / ultraserverNodeId4       (int) its place, 0..N-1, in that set
// The set attributes exist only for the set sizes the node supports, so
// "'ultraserverServerId4' in device.attributes['neuron.aws.com']" selects nodes that can join
// a set of 4. No deviceId or topology_* (it is no single device): CEL naming those must test
// resourceType first. capacityBlockId (AWS documents it) is not published: no platform label
// carries the EC2 capacity block id, and the driver never calls a cloud API from the node.
// Internal to resource_slice.cc.
#pragma once

#include <optional>
#include <vector>

#include "lib/dra/resource_slice.h"
#include "lib/dra/slice_devices.h"

namespace neuron::dra::internal {

// nullopt when the node is no UltraServer node. `published`: the devices in the slices, each
// with its health taint when it has one. `consume_counters`: consume every published device's
// whole counter set (partitionable, all in one slice).
std::optional<SliceDevice> NodeDevice(const NodeContext& ctx, const std::vector<int>& published,
                                      bool consume_counters);

}  // namespace neuron::dra::internal
