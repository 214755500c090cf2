// File: lib/deviceplugin/ultraserver_env.h
// The Neuron runtime's UltraServer environment (lib/ultraserver/runtime_env.h) for a container
// of a pod that the scheduler extender bound as a member of an UltraServer group. The extender
// writes the group's placement onto the pod at bind (lib/extender/pod_group.h):
//   neuron.aws.com/ultraserver-set-size, -server-id, -node-id, -mode, -rank, -rank0-host
// Mode, server id and node id come from this node's own driver (the hardware's truth) and must
// agree with what the extender placed: a disagreement (stale labels, a moved node) fails
// Allocate with both sides named, rather than start a job the runtime would wire wrongly.
// Rank and rank 0's host come from the annotations: only the scheduler knows the group.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/ultraserver/identity.h"

namespace neuron::deviceplugin {

// The same keys as the extender's (tests/extender checks they agree).
inline constexpr char kUsSetSizeAnnotation[] = "neuron.aws.com/ultraserver-set-size";
inline constexpr char kUsServerIdAnnotation[] = "neuron.aws.com/ultraserver-server-id";
inline constexpr char kUsNodeIdAnnotation[] = "neuron.aws.com/ultraserver-node-id";
inline constexpr char kUsModeAnnotation[] = "neuron.aws.com/ultraserver-mode";
inline constexpr char kUsRankAnnotation[] = "neuron.aws.com/ultraserver-rank";
inline constexpr char kUsRank0HostAnnotation[] = "neuron.aws.com/ultraserver-rank0-host";

using EnvList = std::vector<std::pair<std::string, std::string>>;
// This node's identity as the driver shows it (ultraserver::ReadIdentity on the plugin's Fs).
using IdentityFn = std::function<absl::StatusOr<std::optional<ultraserver::Identity>>()>;

// True when the pod's annotations carry an UltraServer placement.
bool HasPlacement(const std::map<std::string, std::string>& annotations);

// The five variables for a pod with a placement, checked against `identity`. InvalidArgument
// for malformed annotations, FailedPrecondition when the node's driver disagrees, Unavailable
// when the driver's identity cannot be read (busy election, I/O).
absl::StatusOr<EnvList> UltraServerEnv(
    const std::map<std::string, std::string>& annotations,
    const absl::StatusOr<std::optional<ultraserver::Identity>>& identity);

}  // namespace neuron::deviceplugin
