// File: lib/ultraserver/labels.h
// The node labels AWS's Neuron device plugin (>= 2.30) publishes for UltraServer nodes, with its
// values, so that affinity rules and LeaderWorkerSet's exclusive topology written for AWS's stack
// work unchanged (SDK deploy/eks/ultraserver.rst):
//   neuron.amazonaws.com/ultraserver-mode          "1_2_4" (supported runtime modes)
//   neuron.amazonaws.com/ultraserver-server-id-4   "bog79p1y8tetj5uu" (equal on the 4 nodes)
//   neuron.amazonaws.com/ultraserver-node-id-4     "0".."3"
//   neuron.amazonaws.com/ultraserver-server-id-2 / -node-id-2 (the pair, "0".."1")
// A trn3 node carries its reservation id and node id under the same keys of every set size it
// supports. The identity can be read back from the labels (the extender and the DRA driver see
// nodes only through the API).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lib/ultraserver/identity.h"

namespace neuron::ultraserver {

inline constexpr char kLabelPrefix[] = "neuron.amazonaws.com/ultraserver-";
inline constexpr char kModeLabel[] = "neuron.amazonaws.com/ultraserver-mode";
// "neuron.amazonaws.com/ultraserver-server-id-4"
std::string ServerIdLabel(int set_size);
std::string NodeIdLabel(int set_size);
// Every key this file may publish, for removal when a node stops being an UltraServer node.
const std::vector<std::string>& AllLabelKeys();

using LabelList = std::vector<std::pair<std::string, std::string>>;

// The labels of `id` (mode always; ids only for sets the node supports and has ids for).
LabelList IdentityLabels(const Identity& id);

// The identity labels describe; nullopt when there is no mode label or it is malformed.
// Sets whose id labels are missing or malformed are left out (MemberOf answers nullopt).
std::optional<Identity> IdentityFromLabels(const std::map<std::string, std::string>& labels);

}  // namespace neuron::ultraserver
