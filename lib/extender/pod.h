// File: lib/extender/pod.h
// What the extender keeps of a Pod: identity, node, phase, its effective Neuron request and the
// extender/device-plugin handshake annotations. Effective request follows upstream
// (k8s.io/component-helpers resource.PodRequests): containers summed; init containers by max;
// restartPolicy=Always init containers (sidecars) are summed into the running total and carried
// into every later init container. For extended resources a limit without a request is the
// request. Pod overhead never names extended resources, so it is ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "lib/assignment/annotations.h"
#include "lib/base/json_prune.h"
#include "lib/extender/pod_group.h"
#include "nlohmann/json.hpp"

namespace neuron::extender {

// Larger per-pod counts are refused as absurd (no node has more IDs; see assignment::kMaxId).
inline constexpr int64_t kMaxRequest = 4096;

struct NeuronRequest {
  int64_t devices = 0;  // aws.amazon.com/neuron
  int64_t cores = 0;    // aws.amazon.com/neuroncore
  bool Any() const { return devices > 0 || cores > 0; }
  bool operator==(const NeuronRequest&) const = default;
};

struct PodInfo {
  std::string ns{}, name{}, uid{}, node_name{}, phase{};
  std::string scheduler_name{};  // spec.schedulerName (the API server defaults it)
  NeuronRequest request{};
  // What the handshake annotations say; nullopt when absent or malformed (the pod then holds
  // IDs we do not know).
  std::optional<assignment::Assignment> assignment{};
  // The UltraServer group the pod belongs to (pod_group.h); nullopt for a pod of none.
  std::optional<PodGroup> group{};
  std::string Key() const { return ns + "/" + name; }
  // Succeeded/Failed pods hold nothing.
  bool Terminated() const { return phase == "Succeeded" || phase == "Failed"; }
};

// One quantity of an extended resource: a JSON integer or a decimal string ("4"). Negative,
// fractional, suffixed or > kMaxRequest values are InvalidArgument.
absl::StatusOr<int64_t> ParseCount(const nlohmann::json& q, const std::string& what);

// Effective request of a pod spec (object with containers / initContainers).
absl::StatusOr<NeuronRequest> EffectiveRequest(const nlohmann::json& spec);

// A v1.Pod object -> PodInfo. InvalidArgument on wrong types or bad quantities.
absl::StatusOr<PodInfo> ParsePod(const nlohmann::json& pod);

// The parts of a Pod that ParsePod reads (for pruned list parsing; lib/base/json_prune.h).
const JsonKeep& PodFields();

}  // namespace neuron::extender
