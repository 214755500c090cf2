// File: lib/operator/yaml_input.h
// YAML documents (what `kubectl apply -f` reads) as JSON objects, with YAML 1.2 core-schema
// typing: plain `true`, `3`, `null` become bool, number, null; quoted scalars stay strings.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace neuron::op {

// Every non-empty document of `text`, in order. InvalidArgument (with yaml-cpp's line and
// column) on malformed YAML; never throws.
absl::StatusOr<std::vector<nlohmann::json>> ParseYamlDocuments(const std::string& text);

}  // namespace neuron::op
