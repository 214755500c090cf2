// File: lib/assignment/ids.h
// Device-plugin IDs and the two Neuron resources. Every ID the plugin advertises is a decimal
// index: "N" is /dev/neuronN for aws.amazon.com/neuron, and logical NeuronCore N (on device
// N / cores_per_device) for aws.amazon.com/neuroncore. The extender writes the same indices into
// the pod annotation AWS_NEURON_IDS, so no mapping table is needed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace neuron::assignment {

enum class ResourceKind { kDevice, kCore };

inline constexpr char kNeuronResource[] = "aws.amazon.com/neuron";
inline constexpr char kNeuronCoreResource[] = "aws.amazon.com/neuroncore";

// "aws.amazon.com/neuron" / "aws.amazon.com/neuroncore".
std::string ResourceName(ResourceKind kind);
// "neuron" / "neuroncore": the short name used in --resources and NEURON_RESOURCE_TYPE.
std::string ShortName(ResourceKind kind);
// Parses a short name ("neuron", "neuroncore") or a full resource name.
std::optional<ResourceKind> ParseResourceKind(absl::string_view name);
// "--resources=neuron,neuroncore" -> kinds, in order, without duplicates. InvalidArgument on
// an unknown or empty entry.
absl::StatusOr<std::vector<ResourceKind>> ParseResourceList(absl::string_view list);

// Largest index accepted anywhere (a trn2u node has 16 * 8 = 128 cores at LNC=1).
inline constexpr int kMaxId = 4095;

// One ID: decimal digits only, no sign, no leading zeros except "0", at most kMaxId.
absl::StatusOr<int> ParseId(absl::string_view s);

// An ID list as found in the AWS_NEURON_IDS annotation: comma-separated IDs or inclusive ranges
// ("0,1,2", "0-3,8"), surrounding spaces per item tolerated. Order is preserved; duplicates,
// empty items, reversed ranges and lists longer than kMaxId + 1 are InvalidArgument.
absl::StatusOr<std::vector<int>> ParseIdList(absl::string_view s);

// "0,1,2" (ascending order is the caller's business).
std::string FormatIdList(const std::vector<int>& ids);
// Sorted, runs collapsed: {0,1,2,3,6} -> "0-3,6"; {5} -> "5". Input need not be sorted.
std::string FormatRanges(std::vector<int> ids);

}  // namespace neuron::assignment
