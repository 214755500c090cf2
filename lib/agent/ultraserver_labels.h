// File: lib/agent/ultraserver_labels.h
// The merge patch that puts AWS's UltraServer labels (lib/ultraserver/labels.h) on a Node and
// takes the stale ones off: every key of ultraserver::AllLabelKeys() is either set to the
// identity's value or null (JSON merge patch: remove), so a node that stops being an UltraServer
// node, or loses a set size, loses those labels. Other labels are never touched.
#pragma once

#include <optional>
#include <string>

#include "lib/ultraserver/identity.h"
#include "nlohmann/json.hpp"

namespace neuron::agent {

// {"metadata":{"labels":{<every UltraServer key>: value or null}}}.
nlohmann::json UltraServerLabelPatch(const std::optional<ultraserver::Identity>& id);

// The Node object already shows what `patch` (UltraServerLabelPatch) asks: every set key with
// that value, every nulled key absent.
bool NodeCarries(const nlohmann::json& node, const nlohmann::json& patch);

// "neuron.amazonaws.com/ultraserver-mode=1_2_4 ..." for logs; "none" without labels.
std::string DescribeUltraServerLabels(const std::optional<ultraserver::Identity>& id);

}  // namespace neuron::agent
