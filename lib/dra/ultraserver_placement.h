// File: lib/dra/ultraserver_placement.h
// What a claim's UltraServerConfig (ultraserverMode = nodes in the set) means on this node:
// its place in the set (lib/ultraserver MemberOf), checked against what the node supports, and
// the runtime's five variables for the claim's containers (lib/ultraserver/runtime_env.h):
//   NEURON_RT_ULTRASERVER_MODE / _SERVER_ID / _NODE_ID   from the node's place in the set
//   NEURON_GLOBAL_TOPOID        the node id in the set (the set is one job's workers, one per
//                               node, so the rank is the node id; 0 for a set of 1)
//   NEURON_GLOBAL_TOPOID0_HOST  the Node holding node id 0 of the same set: this node when it is
//                               (or the set is 1 node), else found through the API by the AWS
//                               node labels (ultraserver_peers.h); "" with a warning when none
//                               is found: the pod still runs (the runtime may find it itself).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/ultraserver/identity.h"

namespace neuron::dra {

// The node's UltraServer identity as the preparer sees it at a claim.
struct UltraServerFacts {
  absl::Status status;                            // Unavailable while the driver is busy
  std::optional<ultraserver::Identity> identity;  // nullopt: not an UltraServer node
};

// The name of the Node holding node id 0 of `m`'s set; NotFound when there is none.
using Rank0Lookup = std::function<absl::StatusOr<std::string>(const ultraserver::SetMember& m)>;

// This node's place in a set of `nodes`. Errors name the node, what it supports and what was
// asked: Unavailable while the identity cannot be read, FailedPrecondition on a node outside any
// UltraServer, InvalidArgument for a set size the node does not support.
absl::StatusOr<ultraserver::SetMember> PlaceInSet(int nodes, const std::string& node_name,
                                                  const UltraServerFacts& facts);

// The five variables for `m` (lookup may be empty: no API, the host stays "" unless it is us).
std::vector<std::pair<std::string, std::string>> UltraServerEnv(const ultraserver::SetMember& m,
                                                                const std::string& node_name,
                                                                const Rank0Lookup& lookup);

}  // namespace neuron::dra
