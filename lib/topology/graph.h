// Internal to lib/topology: bit-mask view of a node's link graph shared by the validity rules and
// the chooser. Not part of the module's contract.
#ifndef NEURON_LIB_TOPOLOGY_GRAPH_H_
#define NEURON_LIB_TOPOLOGY_GRAPH_H_

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include "lib/topology/node_topology.h"

namespace neuron::topology::internal {

using Mask = uint64_t;

inline Mask Bit(int i) { return Mask{1} << i; }
inline int PopCount(Mask m) { return std::popcount(m); }
inline int LowestIndex(Mask m) { return std::countr_zero(m); }

// Which rule applies to a node's device sets (see valid_sets.h).
enum class Rule { kAnySet, kConnected, kTorusBlocks };

struct Graph {
  int n = 0;
  Rule rule = Rule::kAnySet;
  Mask all = 0;
  std::array<Mask, kMaxDevices> nbr{};
  // kTorusBlocks: the aligned group sizes, ascending (1, W, 2W, ..., n).
  std::vector<int> group_sizes;
};

// False when the topology cannot be handled (devices outside 1..kMaxDevices, links.size() !=
// devices). Links out of range are ignored; links are made symmetric.
bool BuildGraph(const NodeTopology& t, Graph* g);

// True when `m` (non-empty) induces a connected subgraph.
bool Connected(const Graph& g, Mask m);

// Torus: whether `size` is an aligned group size; smallest group size >= m (n if none).
bool IsGroupSize(const Graph& g, int size);
int SmallestGroupAtLeast(const Graph& g, int m);

// Device-set rule and the device part of the core-set rule, on masks.
bool ValidDeviceMask(const Graph& g, Mask s);
bool ValidCoreDeviceMask(const Graph& g, Mask d);

// Free-block profile of `free_mask` (see choose.h), written into `out` (cleared first).
void Profile(const Graph& g, Mask free_mask, std::vector<int>* out);
// Size of the largest free block of `free_mask`.
int LargestBlock(const Graph& g, Mask free_mask);

}  // namespace neuron::topology::internal

#endif  // NEURON_LIB_TOPOLOGY_GRAPH_H_
