// File: lib/dra/claim_cache.h
// The compiled-model cache a ResourceClaim's NeuronConfigs ask for (neuron_config.h,
// compileCache) as a CacheMountRequest (cache_mounts.h). Read beside claim_allocation.h with its
// rules: configs of our driver apply in list order, and for each of our results on this node the
// last applicable NeuronConfig naming a cache wins. The requests must agree, since one CDI device
// (one set of mounts) serves all of the claim's containers. Pure: no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "lib/dra/cache_mounts.h"
#include "nlohmann/json.hpp"

namespace neuron::dra {

struct ClaimCache {
  CacheMountRequest request;  // claim, cache and the pods of status.reservedFor
  std::string mount_path;     // in the containers
  bool operator==(const ClaimCache&) const = default;
};

// nullopt when no config names a cache. InvalidArgument for a config that is not valid or for
// requests configured with different caches (or some with none). Never throws.
absl::StatusOr<std::optional<ClaimCache>> ReadClaimCache(const nlohmann::json& claim,
                                                         std::string_view driver,
                                                         std::string_view pool);

// "NeuronCache ml/llama" / "ClusterNeuronCache shared", for messages.
std::string DescribeCache(const std::string& kind, const std::string& ns, const std::string& name);

}  // namespace neuron::dra
