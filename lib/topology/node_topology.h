// The allocator's view of one node: how many devices, logical cores per device, and links.
#ifndef NEURON_LIB_TOPOLOGY_NODE_TOPOLOGY_H_
#define NEURON_LIB_TOPOLOGY_NODE_TOPOLOGY_H_

#include <vector>

#include "absl/status/statusor.h"
#include "lib/topology/device_model.h"
#include "lib/topology/shapes.h"

namespace neuron::topology {

// At most this many devices per node are supported by the allocator (largest shape has 16).
inline constexpr int kMaxDevices = 64;

struct NodeTopology {  // what the allocator needs about one node
  Family family;
  LinkKind link_kind;
  int devices;
  int cores_per_device;  // LOGICAL cores per device (after LNC)
  std::vector<std::vector<int>> links;
};

// lnc 0 = family default. InvalidArgument for an LNC the family doesn't support (families
// that are not LNC-capable accept only 0 and 1; trn2/trn3 accept 0, 1 and 2), or for a shape
// whose device id is unknown. cores_per_device = physical cores / lnc
// (trn2.48xlarge: LNC=2 -> 4 per device, 64 total; LNC=1 -> 8 per device, 128 total).
absl::StatusOr<NodeTopology> TopologyForShape(const Shape& shape, int lnc = 0);

// For nodes whose shape is unknown but whose devices were read from sysfs. devices =
// links.size(). Links are cleaned (indices outside [0, devices), self links and duplicates are
// dropped; a link seen from one side only is added to the other side). link_kind is derived
// from the graph: no links -> kNone; every device linked to every other (>= 2 devices) ->
// kAllToAll; exactly the W x W torus described at LinkKind (W >= 3) -> kTorus2D; one cycle
// through all devices -> kRing; one path through all devices -> kChain. Any other graph (e.g. a
// torus with a device missing) is reported as kChain, whose rule ("the set is connected in the
// link graph") is the one that applies to any graph.
NodeTopology TopologyFromLinks(Family family, int cores_per_device,
                               const std::vector<std::vector<int>>& links);
// Logical core c lives on device c / cores_per_device.

}  // namespace neuron::topology

#endif  // NEURON_LIB_TOPOLOGY_NODE_TOPOLOGY_H_
