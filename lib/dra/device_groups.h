// Connected device groups of one node, as published in resource.aws.com/devicegroup{1,4,8,16}_id.
//
// For each size K the node's devices are partitioned into disjoint groups of exactly K: the
// aligned blocks {bK, ..., (b+1)K-1} that lib/topology's IsValidDeviceSet accepts (rows and
// halves of the trn torus, windows of inf ring and chain shapes). A device in no such block
// (inf2.24xlarge devices 4 and 5 for K = 4) gets no group of that size, so a claim constrained
// by matchAttribute on that size can never be given it. Equal IDs <=> one group.
//
// IDs. AWS's EFA driver (DraNet) labels each EFA interface with the same attributes, derived
// from the EFA PCI addresses paired with the Neuron devices of the block: size 1 = that address,
// size K > 1 = the first 16 hex digits of SHA-256 over the sorted, distinct addresses joined by
// ",". When the pairing is known we derive the same IDs, so one constraint can align Neuron
// devices and EFA interfaces; otherwise (and wherever that scheme would put two groups under
// one ID, e.g. two devices sharing one EFA at size 1) the ID is SHA-256 over
// "<node>/<K>/<index>", 16 hex digits: deterministic per node, distinct across nodes.
#ifndef NEURON_LIB_DRA_DEVICE_GROUPS_H_
#define NEURON_LIB_DRA_DEVICE_GROUPS_H_

#include <array>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "lib/topology/node_topology.h"

namespace neuron::dra {

inline constexpr std::array<int, 4> kGroupSizes = {1, 4, 8, 16};

struct DeviceGroup {
  int size;
  int index;                 // b: the block {b*size, ..., (b+1)*size-1}
  std::vector<int> members;  // ascending
  std::string id;
};

class DeviceGroups {
 public:
  // efa_bdfs: Neuron device index -> PCI address of its paired EFA interface (may be empty).
  DeviceGroups(const topology::NodeTopology& t, absl::string_view node_name,
               const std::map<int, std::string>& efa_bdfs);

  const std::vector<DeviceGroup>& all() const { return groups_; }
  // The group of `size` holding `device`, or nullptr.
  const DeviceGroup* Find(int size, int device) const;

 private:
  std::vector<DeviceGroup> groups_;
};

// Where a device sits in its shape's link layout, for topology_x / topology_y: on a W x W torus
// column d % W and row d / W; on rings, chains and single devices x = d, y = 0.
struct GridPosition {
  int x;
  int y;
};
GridPosition PositionOf(const topology::NodeTopology& t, int device);

}  // namespace neuron::dra

#endif  // NEURON_LIB_DRA_DEVICE_GROUPS_H_
