// File: lib/extender/pod_group.h
// UltraServer pod groups: the pods of one job that must land one per node on one set of N
// nodes (N = 1, 2 or 4) of a Trn2 UltraServer (../shared/NEURON.md §7). A pod says so by
//   label      neuron.aws.com/pod-group=<name>         (namespace-scoped group identity)
//   label or annotation neuron.aws.com/ultraserver-nodes: "1" | "2" | "4"  (N)
// or as a LeaderWorkerSet pod (LWS copies these from the LeaderWorkerSet onto every pod):
//   label      leaderworkerset.sigs.k8s.io/group-key   (group identity)
//   annotation leaderworkerset.sigs.k8s.io/size         (pods in the group; must equal N)
//   annotation leaderworkerset.sigs.k8s.io/exclusive-topology:
//              neuron.amazonaws.com/ultraserver-server-id-N   (N; AWS's templates)
// An LWS pod whose exclusive topology is something else, and that carries no
// ultraserver-nodes, is not an UltraServer group. Anything inconsistent is kept as an error
// that the filter reports for every node: never a crash, never a silent plain pod.
//
// Bind writes the placement back onto the pod (the device plugin reads it at Allocate):
//   neuron.aws.com/ultraserver-set-size, -server-id, -node-id, -mode, -rank, -rank0-host
#pragma once

#include <optional>
#include <string>

#include "nlohmann/json.hpp"

namespace neuron::extender {

inline constexpr char kPodGroupLabel[] = "neuron.aws.com/pod-group";
inline constexpr char kUltraServerNodesKey[] = "neuron.aws.com/ultraserver-nodes";
inline constexpr char kLwsGroupKeyLabel[] = "leaderworkerset.sigs.k8s.io/group-key";
inline constexpr char kLwsSizeAnnotation[] = "leaderworkerset.sigs.k8s.io/size";
inline constexpr char kLwsExclusiveAnnotation[] = "leaderworkerset.sigs.k8s.io/exclusive-topology";

// Placement annotations written by bind.
inline constexpr char kSetSizeAnnotation[] = "neuron.aws.com/ultraserver-set-size";
inline constexpr char kServerIdAnnotation[] = "neuron.aws.com/ultraserver-server-id";
inline constexpr char kNodeIdAnnotation[] = "neuron.aws.com/ultraserver-node-id";
inline constexpr char kModeAnnotation[] = "neuron.aws.com/ultraserver-mode";
inline constexpr char kRankAnnotation[] = "neuron.aws.com/ultraserver-rank";
inline constexpr char kRank0HostAnnotation[] = "neuron.aws.com/ultraserver-rank0-host";

struct PodGroup {
  std::string key;    // "<ns>/<name>" or "<ns>/lws:<group-key>"
  int set_size = 0;   // N: 1, 2 or 4 (0 when `error` is set)
  std::string error;  // non-empty: the pod's group description is inconsistent
  bool operator==(const PodGroup&) const = default;
};

// The group `pod` belongs to; nullopt for a pod of no UltraServer group. `ns` is the pod's
// namespace (already defaulted). `labels` / `annotations` may be null or of any type.
std::optional<PodGroup> ParsePodGroup(const std::string& ns, const nlohmann::json* labels,
                                      const nlohmann::json* annotations);

}  // namespace neuron::extender
