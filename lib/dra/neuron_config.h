// The opaque claim configurations AWS's Neuron DRA driver accepts (ResourceClaim
// spec.devices.config[].opaque.parameters, driver neuron.aws.com):
//   {"apiVersion": "neuron.aws.com/v1", "kind": "NeuronConfig", "logicalNeuronCore": 1|2}
//   {"apiVersion": "neuron.aws.com/v1", "kind": "UltraServerConfig", "ultraserverMode": 1|2|4}
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
#include <string_view>

#include "absl/status/statusor.h"

namespace neuron::dra {

inline constexpr char kConfigApiVersion[] = "neuron.aws.com/v1";
inline constexpr char kNeuronConfigKind[] = "NeuronConfig";
inline constexpr char kUltraServerConfigKind[] = "UltraServerConfig";

struct NeuronConfig {
  // NEURON_LOGICAL_NC_CONFIG for the claim's containers; nullopt = the node's setting.
  std::optional<int> logical_neuron_core;
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
