// File: lib/operator/upgrade.h
// Driver upgrades through KMM's ordered upgrade. With spec.driverVersion set, KMM loads the
// module only on nodes labelled kmm.node.kubernetes.io/version-module.<ns>.<name>=<version>,
// and labels kmm.node.kubernetes.io/<ns>.<name>.version.ready=<version> once that version is
// loaded. Moving a node to a new version = tainting it aws-neuron-driver-upgrade=true:NoExecute
// (its Neuron workloads leave; KMM's pods tolerate the taint) and relabelling it; when KMM
// reports the version ready, the taint comes off.
//
// With upgradePolicy.drain enabled (device_config_drain.h), a node is not tainted: it is
// cordoned and labelled DrainLabel(dc)=<version>, its Neuron pods are evicted through
// the Eviction API (the reconciler does that, from the plan's drain orders), and only when none
// is left is it labelled for the new version; once KMM reports it ready it is uncordoned.
// Per node then: pending -> draining -> upgrading -> done; draining -> failed when pods are
// still there after drain.timeout (unless drain.force: then they are deleted).
//
// Per node: pending -> upgrading -> done, or -> failed when it is not ready within
// upgradePolicy.nodeTimeout (its taint stays, and no further node starts). At most maxParallel
// nodes are upgrading; paused starts none. A node seen for the first time (no version label:
// no driver of ours has run there) is labelled at once and without a taint, as upstream does.
// The labels are the truth, status.nodes keeps only the times: an operator restarted
// mid-rollout re-derives every state from the nodes and never restarts a done node.
//
// Pure: the reconciler passes the nodes and the previous status in, applies the changes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "lib/operator/device_config.h"
#include "nlohmann/json.hpp"

namespace neuron::op {

inline constexpr char kUpgradeTaintKey[] = "aws-neuron-driver-upgrade";

// kmm.node.kubernetes.io/version-module.<ns>.<name>: the version a node should run (ours).
std::string VersionLabel(const DeviceConfig& dc);
// kmm.node.kubernetes.io/<ns>.<name>.version.ready: the version KMM has loaded (KMM's).
std::string VersionReadyLabel(const DeviceConfig& dc);
// k8s.aws/driver-drain.<ns>.<name>: the label on a node this DeviceConfig cordoned to drain it
// (value: the version drained for), so only what we cordoned is uncordoned, also after a
// restart. A label, not an annotation: the operator's Node cache keeps labels only.
std::string DrainLabel(const DeviceConfig& dc);

enum class NodeUpgradeState { kPending, kDraining, kUpgrading, kDone, kFailed };
const char* StateName(NodeUpgradeState s);

// One entry of status.nodes.
struct NodeUpgrade {
  std::string node;
  std::string version;  // the driver version the entry is about
  NodeUpgradeState state = NodeUpgradeState::kPending;
  absl::Time since;  // when the node entered `state`
  std::string reason;
};
nlohmann::json ToJson(const NodeUpgrade& n);
// Entries of a previous status.nodes; malformed ones are skipped (the labels still say where
// each node is; only its timer restarts).
std::vector<NodeUpgrade> ParseNodeUpgrades(const nlohmann::json& status_nodes);

// One Node update: a JSON merge patch of labels and the whole taint list (spec.taints has no
// merge key, so the list is replaced), conditional on the resourceVersion it was planned from.
struct NodeChange {
  std::string node;
  std::string resource_version;
  std::map<std::string, std::optional<std::string>> labels;  // nullopt: remove the label
  std::optional<nlohmann::json> taints;
  std::optional<bool> unschedulable;  // cordon / uncordon
  nlohmann::json Patch() const;
};

struct Transition {
  std::string node;
  NodeUpgradeState to = NodeUpgradeState::kPending;
  std::string message;
};

// A pod a drain moves off its node (see DrainsPod), as the reconciler found it.
struct DrainPod {
  std::string ns, name;
  std::string blocker;       // why it may not be evicted (EvictionBlocker); "" = it may
  bool terminating = false;  // being deleted already: waited for, not evicted again
};
using NodePods = std::map<std::string, std::vector<DrainPod>>;  // node name -> its pods

// What the reconciler does for one draining node this pass.
struct DrainOrder {
  std::string node;
  std::vector<DrainPod> evict;   // through pods/eviction; a 429 means wait, never delete
  std::vector<DrainPod> remove;  // drain.force after the timeout: deleted outright
};

struct UpgradePlan {
  std::vector<NodeChange> changes;
  std::vector<DrainOrder> drains;
  std::vector<NodeUpgrade> nodes;  // the new status.nodes, by node name
  std::vector<Transition> transitions;
  // Pass again by then: the earliest deadline of an upgrading node.
  std::optional<absl::Duration> recheck_after;
  int done = 0, upgrading = 0, pending = 0, failed = 0, draining = 0;
  // The Upgrading condition, and a Degraded message when a node failed.
  std::string condition_status;  // "True" while nodes remain to move, else "False"
  std::string condition_reason;
  std::string condition_message;
  std::optional<std::string> degraded;
  // The retry annotation's value this plan has acted on (kept in status.upgrade.retryHandled).
  std::string retry_handled;
  // What the drains did this pass (the reconciler fills these in, for metrics).
  int evicted = 0, eviction_refused = 0, deleted = 0;
  std::vector<absl::Duration> drain_durations;  // nodes that finished draining this pass
};

// A rollout in numbers (the operator's metrics): nodes per state, and how long the node that
// has been upgrading longest has been at it (zero when none is upgrading).
struct UpgradeProgress {
  int pending = 0, upgrading = 0, done = 0, failed = 0;
  absl::Duration longest_upgrading = absl::ZeroDuration();
  int draining = 0;
  // This pass's drain work: evictions done and refused by a budget, force deletions, and how
  // long each node that finished draining took.
  int evicted = 0, eviction_refused = 0, deleted = 0;
  std::vector<absl::Duration> drain_durations;
};
UpgradeProgress Progress(const UpgradePlan& plan, absl::Time now);

// `nodes`: every Node as the cache holds it (metadata.name, resourceVersion, labels;
// spec.taints). `pods`: the pods a drain would move, for the
// nodes being drained (the reconciler lists them; a node absent from it has none).
// `retry_failed`: every failed node starts over (the retry annotation changed). Only call with
// a driverVersion set in kmm mode.
UpgradePlan PlanUpgrade(const DeviceConfig& dc, const std::vector<nlohmann::json>& nodes,
                        const std::vector<NodeUpgrade>& previous, absl::Time now,
                        const NodePods& pods = {}, bool retry_failed = false);

// The changes that take `dc`'s upgrade labels and taints off the nodes: on nodes that left the
// selector, or all of them when the DeviceConfig is deleted or no longer sets a version.
// `all`: every node carrying its version label; otherwise only those outside the selector.
// The shared taint comes off a node only if no other DeviceConfig's version label is on it.
std::vector<NodeChange> PlanCleanup(const DeviceConfig& dc,
                                    const std::vector<nlohmann::json>& nodes, bool all);

}  // namespace neuron::op
