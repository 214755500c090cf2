// Which device sets and core sets a workload may be given on one node.
//
// Device set S (device indices; must be non-empty, in range, without duplicates):
//   * |S| == 1 or |S| == devices: always valid.
//   * kNone, kAllToAll: every set is valid (nothing to respect / everything is linked).
//   * kRing, kChain (and any irregular graph from TopologyFromLinks): S must be connected in the
//     link graph. On a ring that is a window of consecutive devices along the ring, INCLUDING
//     windows that wrap (inf2.48xlarge {10,11,0,1}): the driver lists 11 and 0 as neighbours,
//     so such a window is as well connected as {0,1,2,3}; refusing it would strand free
//     devices. On the inf2.24xlarge chain 0-1-2-3-4-5 there is no 5-0 link, so windows never
//     wrap. Non-adjacent sets ({0,2,4}) are never valid.
//   * kTorus2D (W x W, trn1/trn2: W = 4): |S| must be 1, devices, or W * 2^j dividing devices,
//     and S must be the aligned block {b*|S|, ..., (b+1)*|S|-1}. On 16 devices: 4 = a row
//     {0-3},{4-7},{8-11},{12-15}; 8 = {0-7},{8-15}; 16 = all. Counts 2, 3, 5, ... are invalid.
//
// Core set C (logical core ids, core c on device c / cores_per_device; non-empty, in range, no
// duplicates): let k = |C|, m = ceil(k / cores_per_device), D = the devices C touches.
//   * k == all cores of the node: always valid.
//   * |D| must be exactly m (the fewest devices that can hold k cores), and
//   * D must be linked: kNone/kAllToAll any D; ring/chain/irregular: D connected in the link
//     graph; kTorus2D: D connected AND inside one aligned block of the smallest torus group size
//     >= m (trn1: 3 devices must lie within one row, 5..7 devices within {0-7} or {8-15}).
//     When m is itself a group size this means D is exactly an aligned block.
//   Which cores of a device are used does not matter (cores of one device are equivalent).
#ifndef NEURON_LIB_TOPOLOGY_VALID_SETS_H_
#define NEURON_LIB_TOPOLOGY_VALID_SETS_H_

#include <vector>

#include "lib/topology/node_topology.h"

namespace neuron::topology {

bool IsValidDeviceSet(const NodeTopology& t, const std::vector<int>& devices);
bool IsValidCoreSet(const NodeTopology& t, const std::vector<int>& cores);

}  // namespace neuron::topology

#endif  // NEURON_LIB_TOPOLOGY_VALID_SETS_H_
