// The opaque claim configurations AWS's Neuron DRA driver accepts (ResourceClaim
// spec.devices.config[].opaque.parameters, driver neuron.aws.com):
//   {"apiVersion": "neuron.aws.com/v1", "kind": "NeuronConfig", "logicalNeuronCore": 1|2}
//   {"apiVersion": "neuron.aws.com/v1", "kind": "UltraServerConfig", "ultraserverMode": 1|2|4}
// Ours on top of AWS's NeuronConfig: an optional compiled-model cache for the claim's containers,
//   "compileCache": {"name": "<NeuronCache in the claim's namespace>"} or
//                   {"clusterCache": "<ClusterNeuronCache>"}, optional "mountPath": "/abs/path"
// (default /var/tmp/neuron-compile-cache, where neuronx-cc looks; absolute, without "..").
// ultraserverMode is the NUMBER OF NODES of the UltraServer set the claim's pod joins (AWS's
// templates: 4 = the whole trn2u UltraServer, 2 = a pair, 1 = the node alone), not the runtime's
// NEURON_RT_ULTRASERVER_MODE enum (lib/ultraserver/identity.h maps one to the other).
// Both kinds may configure the same request (AWS's us-and-lnc-config.yaml: two config entries).
// Strict, because a typo must fail the claim at prepare time instead of silently running with
// the node's defaults: unknown fields (including the other kind's field), another apiVersion or
// kind, a missing ultraserverMode or values outside the lists above are InvalidArgument errors
// naming the problem.
#ifndef NEURON_LIB_DRA_NEURON_CONFIG_H_
#define NEURON_LIB_DRA_NEURON_CONFIG_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace neuron::dra {

inline constexpr char kConfigApiVersion[] = "neuron.aws.com/v1";
inline constexpr char kNeuronConfigKind[] = "NeuronConfig";
inline constexpr char kUltraServerConfigKind[] = "UltraServerConfig";

// The cache kinds and default mount path of lib/cache/cache_api.h, repeated here so that this
// pure target needs no API library (neuron_preparer.cc checks they agree at compile time).
inline constexpr char kNeuronCacheKind[] = "NeuronCache";
inline constexpr char kClusterNeuronCacheKind[] = "ClusterNeuronCache";
inline constexpr char kDefaultCacheMountPath[] = "/var/tmp/neuron-compile-cache";

// NeuronConfig.compileCache: which cache, and where the containers see it.
struct CompileCacheConfig {
  std::string kind;  // kNeuronCacheKind (in the claim's namespace) or kClusterNeuronCacheKind
  std::string name;
  std::string mount_path;  // absolute; kDefaultCacheMountPath when not given
  bool operator==(const CompileCacheConfig&) const = default;
};

struct NeuronConfig {
  // NEURON_LOGICAL_NC_CONFIG for the claim's containers; nullopt = the node's setting.
  std::optional<int> logical_neuron_core;
  std::optional<CompileCacheConfig> compile_cache;  // nullopt = no cache mounted
  bool operator==(const NeuronConfig&) const = default;
};

struct UltraServerConfig {
  int ultraserver_mode = 0;  // nodes in the set: 1, 2 or 4
  bool operator==(const UltraServerConfig&) const = default;
};

// One opaque config entry: exactly one of the two is set.
struct OpaqueConfig {
  std::optional<NeuronConfig> neuron;
  std::optional<UltraServerConfig> ultraserver;
  bool operator==(const OpaqueConfig&) const = default;
};

// Parses the parameters' JSON bytes, either kind. Never throws.
absl::StatusOr<OpaqueConfig> ParseOpaqueConfig(std::string_view json_bytes);

// Parses the parameters' JSON bytes as a NeuronConfig (another kind is an error). Never throws.
absl::StatusOr<NeuronConfig> ParseNeuronConfig(std::string_view json_bytes);

}  // namespace neuron::dra

#endif  // NEURON_LIB_DRA_NEURON_CONFIG_H_
