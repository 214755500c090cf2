// File: lib/operator/upgrade_steps.h
// The steps PlanUpgrade (upgrade.h) is made of, exposed for table tests; not a contract for
// other modules. One pass over the matching nodes, sorted by name:
//
//   Classify   each node alone: done, upgrading (under way), failed, first install, or a
//              candidate (labelled for an older version, or blocked from a first install);
//              the reason, the timing (since, deadline), its Node change and its Event.
//   Admit      which candidates start now (already tainted first; at most maxParallel
//              upgrading; none while paused or after a failure) and the change for each;
//              the rest stay pending with the reason why.
//   Summarize  counts, the Upgrading condition and the Degraded message.
//
// Every step is pure; PlanUpgrade strings them together and adds the cleanup of nodes that
// left the selector.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "lib/operator/device_config.h"
#include "lib/operator/upgrade.h"
#include "nlohmann/json.hpp"

namespace neuron::op::upgrade_steps {

// What a rollout moves nodes to: the version and the two KMM labels of one DeviceConfig.
struct Target {
  std::string version;
  std::string version_label;  // VersionLabel(dc)
  std::string ready_label;    // VersionReadyLabel(dc)
  std::string drain_label;    // DrainLabel(dc)
};
Target TargetOf(const DeviceConfig& dc);

// Reading and changing a Node (also used by PlanCleanup). Missing or mistyped fields read as
// empty.
const nlohmann::json& Labels(const nlohmann::json& node);
std::string LabelOf(const nlohmann::json& node, const std::string& key);
bool HasLabel(const nlohmann::json& node, const std::string& key);
std::string NameOf(const nlohmann::json& node);
bool HasOurTaint(const nlohmann::json& node);
nlohmann::json WithOurTaint(const nlohmann::json& node);     // the node's taints plus ours
nlohmann::json WithoutOurTaint(const nlohmann::json& node);  // the node's taints but ours
NodeChange ChangeFor(const nlohmann::json& node);  // an empty change at its resourceVersion

// A node's state this pass, as classify sees it alone.
enum class NodeClass { kDone, kDraining, kUpgrading, kFailed, kFirstInstall, kCandidate };
const char* ClassName(NodeClass c);

// One matching node's part in this pass.
struct NodeStep {
  const nlohmann::json* node = nullptr;  // the Node as the cache holds it
  NodeClass cls = NodeClass::kCandidate;
  // The status.nodes entry. For a candidate: pending, since when it has been pending, and
  // no reason yet (admit writes it, or moves the node to upgrading).
  NodeUpgrade entry;
  // Upgrading (and first install): when nodeTimeout runs out.
  std::optional<absl::Time> deadline;
  std::optional<NodeChange> change;      // the Node patch, if any
  std::optional<Transition> transition;  // the Event, when the node entered a state with news
  std::optional<DrainOrder> drain;       // evictions (or deletions) to do for it this pass
  std::optional<absl::Duration> drained_after;  // it finished draining now, after this long
  // Read by admit: the state of the previous entry at the target version, our taint on the
  // node, and the version it is labelled for ("" when unlabelled).
  std::optional<NodeUpgradeState> previous;
  bool tainted = false;
  std::string from;
  std::string drain_for;  // the version the node was cordoned for (drain label), or ""
};

// Step 1. `previous`: the node's entry in the previous status.nodes for target.version, or
// null; `pods`: what a drain would still move off it (null: nothing). A pure function of its
// arguments.
NodeStep Classify(const nlohmann::json& node, const NodeUpgrade* previous, const Target& target,
                  const UpgradePolicy& policy, absl::Time now,
                  const std::vector<DrainPod>* pods = nullptr);
// Classify over the nodes dc's selector matches, in name order, each with its entry in
// `previous` about the target version (the last one, if several).
std::vector<NodeStep> ClassifyMatching(const DeviceConfig& dc,
                                       const std::vector<nlohmann::json>& nodes,
                                       const std::vector<NodeUpgrade>& previous, absl::Time now,
                                       const NodePods& pods = {});

// Step 2. `steps`: classified nodes in name order. Returns them with every candidate decided:
// the other nodes first (in their order), then the candidates in the order admit considered
// them (already tainted first), so changes, Events and the upgrading names come out in the
// order they were decided.
std::vector<NodeStep> Admit(std::vector<NodeStep> steps, const Target& target,
                            const UpgradePolicy& policy, absl::Time now);

// Step 3: the counts and the conditions of decided steps (in Admit's order).
struct Summary {
  int done = 0, upgrading = 0, pending = 0, failed = 0, draining = 0;
  std::string condition_status;  // "True" while nodes remain to move, else "False"
  std::string condition_reason;
  std::string condition_message;
  std::optional<std::string> degraded;
};
Summary Summarize(const std::vector<NodeStep>& steps, const Target& target,
                  const UpgradePolicy& policy);

}  // namespace neuron::op::upgrade_steps
