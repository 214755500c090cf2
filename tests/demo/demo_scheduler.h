// File: tests/demo/demo_scheduler.h
// kube-scheduler's side of the extender protocol, for the demo: for one pod it calls /filter
// with the candidate node names (nodeCacheCapable), /prioritize with the nodes that passed,
// picks the highest score (the extender is the only scorer here; kube-scheduler would add its
// own plugins' scores) and calls /bind, exactly as kube-scheduler v1.32 sends them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace neuron::demo {

struct Placement {
  std::string node;                            // "" when no node fits
  std::map<std::string, std::string> refused;  // node -> the extender's reason
  std::map<std::string, int> scores;           // node -> prioritize score (0-10)
};

// An error is a transport or protocol failure; a pod that fits nowhere is a Placement without
// a node.
absl::StatusOr<Placement> SchedulePod(int extender_port, const nlohmann::json& pod,
                                      const std::vector<std::string>& nodes);

}  // namespace neuron::demo
