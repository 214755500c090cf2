// The opaque claim configuration AWS's Neuron DRA driver accepts (ResourceClaim
// spec.devices.config[].opaque.parameters, driver neuron.aws.com):
//   {"apiVersion": "neuron.aws.com/v1", "kind": "NeuronConfig", "logicalNeuronCore": 1|2}
// Strict, because a typo must fail the claim at prepare time instead of silently running with
// the node's LNC: unknown fields, another apiVersion or kind, or an LNC other than 1 or 2 are
// InvalidArgument errors naming the problem.
#ifndef NEURON_LIB_DRA_NEURON_CONFIG_H_
#define NEURON_LIB_DRA_NEURON_CONFIG_H_

#include <optional>
#include <string_view>

#include "absl/status/statusor.h"

namespace neuron::dra {

inline constexpr char kConfigApiVersion[] = "neuron.aws.com/v1";
inline constexpr char kNeuronConfigKind[] = "NeuronConfig";

struct NeuronConfig {
  // NEURON_LOGICAL_NC_CONFIG for the claim's containers; nullopt = the node's setting.
  std::optional<int> logical_neuron_core;
  bool operator==(const NeuronConfig&) const = default;
};

// Parses the parameters' JSON bytes. Never throws.
absl::StatusOr<NeuronConfig> ParseNeuronConfig(std::string_view json_bytes);

}  // namespace neuron::dra

#endif  // NEURON_LIB_DRA_NEURON_CONFIG_H_
