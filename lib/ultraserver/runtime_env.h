// File: lib/ultraserver/runtime_env.h
// The environment the Neuron runtime reads in each worker of an UltraServer job, the variables
// AWS's init script (src/k8/k8s-ultraserver-init-script.sh) writes into /etc/environment; we
// inject them at allocation instead (device plugin Allocate, DRA CDI edits):
//   NEURON_RT_ULTRASERVER_MODE       1 = X4, 2 = X2H, 3 = X2V, 4 = X1
//   NEURON_RT_ULTRASERVER_SERVER_ID  the set's server id
//   NEURON_RT_ULTRASERVER_NODE_ID    this node's id in the set
//   NEURON_GLOBAL_TOPOID             the worker's rank: workers sorted by (server id, node id), so
//                                    within one set it is the node id
//   NEURON_GLOBAL_TOPOID0_HOST       where rank 0 runs
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lib/ultraserver/identity.h"

namespace neuron::ultraserver {

inline constexpr char kEnvMode[] = "NEURON_RT_ULTRASERVER_MODE";
inline constexpr char kEnvServerId[] = "NEURON_RT_ULTRASERVER_SERVER_ID";
inline constexpr char kEnvNodeId[] = "NEURON_RT_ULTRASERVER_NODE_ID";
inline constexpr char kEnvTopoId[] = "NEURON_GLOBAL_TOPOID";
inline constexpr char kEnvTopoId0Host[] = "NEURON_GLOBAL_TOPOID0_HOST";

struct Placement {
  SetMember member;
  int rank = 0;
  std::string rank0_host;
};

// The five variables, in the order above. The X1 set (size 1) carries the init script's
// defaults for the ids it has none of: server id kNoServerId, node id -1 -> rank 0.
std::vector<std::pair<std::string, std::string>> RuntimeEnv(const Placement& p);

}  // namespace neuron::ultraserver
