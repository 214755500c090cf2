// File: lib/agent/node_labels.h
// Node labels for NFD's local feature source: nfd-worker reads every file in its features.d
// directory (one `key=value` per line) and nfd-master turns them into node labels. Keys live in
// feature.node.kubernetes.io, which nfd-master always allows (no extraLabelNs needed).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "lib/inventory/inventory.h"

namespace neuron::agent {

inline constexpr char kLabelPrefix[] = "feature.node.kubernetes.io/aws-neuron";
inline constexpr char kFeatureFileName[] = "aws-neuron";

using Labels = std::vector<std::pair<std::string, std::string>>;

// aws-neuron=true, -family, -device-count, -core-count (logical) and -lnc (both only while LNC
// is readable), -physical-core-count, -instance-type (when known).
// Empty when the node has no Neuron device, so the labels disappear from such nodes.
Labels NodeLabels(const inventory::Inventory& inv);

// The features.d file body for `labels`.
std::string FeatureFileContent(const Labels& labels);

// Writes `dir`/`name` atomically: a dot-file (ignored by NFD) first, then rename(2) over the
// target, so nfd-worker never reads a half-written file. Removes the file when `labels` is empty.
// Skips the write when the content is unchanged.
absl::Status WriteFeatureFile(const std::string& dir, const std::string& name,
                              const Labels& labels);

}  // namespace neuron::agent
