// Internal to lib/topology: enumeration of candidate device sets (never all subsets).
#ifndef NEURON_LIB_TOPOLOGY_ENUMERATE_H_
#define NEURON_LIB_TOPOLOGY_ENUMERATE_H_

#include <functional>

#include "lib/topology/graph.h"

namespace neuron::topology::internal {

// Upper bound on candidate sets visited per call; reached only by requests of many devices on
// irregular or all-to-all graphs (>= 2^16 candidates). Beyond it the best set seen so far wins.
inline constexpr int kMaxCandidates = 1 << 16;

// Calls visit(mask) once for every connected set of exactly k devices inside `allowed`
// (ESU enumeration: each set is grown from its lowest device through an exclusive
// neighbourhood, so it is produced once). Returns false if the budget ran out.
bool ForEachConnectedSet(const Graph& g, Mask allowed, int k,
                         const std::function<void(Mask)>& visit);

// Calls visit(mask) for every k-subset of `allowed` that contains `must` (must <= allowed).
bool ForEachSubset(Mask allowed, Mask must, int k, const std::function<void(Mask)>& visit);

}  // namespace neuron::topology::internal

#endif  // NEURON_LIB_TOPOLOGY_ENUMERATE_H_
