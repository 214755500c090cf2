// Best-fit choice of devices / cores on one node, and a 0..10 node score.
//
// Inputs: `free[i]` says whether device (or logical core) i is free; indices past the end of
// `free` count as not free. count <= 0, a must_include id that is out of range, duplicated or not
// free, or more must_include ids than count -> nullopt. Results are sorted ascending and are
// a pure function of the inputs (deterministic).
//
// "Free block" (what fragmentation is measured on): a set of free devices that would itself be
// a valid device set (see valid_sets.h). The free blocks of a free mask are summarised as a
// profile, compared lexicographically (bigger is better):
//   kTorus2D: (number of fully free aligned groups of each size, largest size first, down to
//             single devices) -- e.g. on trn1 (#free 16-blocks, #free halves, #free rows,
//             #free devices);
//   ring/chain/irregular: sizes of the connected components of free devices, largest first;
//   kNone/kAllToAll: (number of free devices).
// The first entry that differs decides; it starts with the largest free block.
//
// ChooseDevices: among valid device sets of `count` devices that are all free and contain every
// must_include id, the one whose removal leaves the best profile (i.e. keeps the largest free
// block, then the most large blocks); ties -> lowest ids (lexicographically smallest sorted
// list). Only candidate windows / aligned groups / connected sets are enumerated, never all
// subsets.
//
// ChooseCores: among valid core sets of `count` free cores containing must_include:
//   1. the device set D (|D| = ceil(count / cores_per_device)) that leaves the best profile of
//      WHOLLY free devices -- so cores are taken from partially used devices first and whole
//      devices stay whole;
//   2. then the tightest fit: fewest free cores left behind on D;
//   3. then lowest core ids.
//   Inside D, must_include cores are taken first, then the devices with the fewest free cores
//   are filled first (ties: lower device id), lowest core ids first on each device.
//   If the free cores are scattered so that no ceil(count / cpd) linked devices hold `count`
//   free cores, the result is nullopt (a workload is never spread over more devices).
//
// ScoreDevices / ScoreCores: 0 when ChooseDevices / ChooseCores finds nothing. Otherwise, with
// the best choice applied: R = free devices (cores) left, F = the largest free block left (for
// cores: largest block of wholly free devices x cores_per_device), N = devices (cores) of the
// node; q = (R == 0 ? 1 : F / R) (how unfragmented the rest is), u = (N - R) / N (how full the
// node becomes, i.e. bin packing); score = 1 + floor(9 * (q + u) / 2), in 1..10.
#ifndef NEURON_LIB_TOPOLOGY_CHOOSE_H_
#define NEURON_LIB_TOPOLOGY_CHOOSE_H_

#include <optional>
#include <vector>

#include "lib/topology/node_topology.h"

namespace neuron::topology {

std::optional<std::vector<int>> ChooseDevices(const NodeTopology& t, const std::vector<bool>& free,
                                              int count, const std::vector<int>& must_include = {});
std::optional<std::vector<int>> ChooseCores(const NodeTopology& t,
                                            const std::vector<bool>& free_cores, int count,
                                            const std::vector<int>& must_include = {});

// 0..10 (kube-scheduler extender range): 0 = cannot place; higher = placement leaves the node
// less fragmented (better packing).
int ScoreDevices(const NodeTopology& t, const std::vector<bool>& free, int count);
int ScoreCores(const NodeTopology& t, const std::vector<bool>& free_cores, int count);

}  // namespace neuron::topology

#endif  // NEURON_LIB_TOPOLOGY_CHOOSE_H_
