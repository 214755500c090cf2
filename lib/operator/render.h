// File: lib/operator/render.h
// Children as multi-document YAML (what `neuron-operator render` prints), in apply order.
#pragma once

#include <string>
#include <vector>

#include "lib/operator/children.h"

namespace neuron::op {

// Strings that YAML would read as another type ("true", "8000", "1.0", "") stay quoted, so the
// output parses back to the same JSON.
std::string RenderYaml(const std::vector<Child>& children);

// One JSON value as a YAML document (no leading "---"), with the same quoting.
std::string ToYaml(const nlohmann::json& value);

}  // namespace neuron::op
