// File: lib/operator/upgrade.cc
#include "lib/operator/upgrade.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/k8s/k8s_time.h"
#include "lib/k8s/object_view.h"
#include "lib/operator/upgrade_steps.h"

namespace neuron::op {
namespace {

using nlohmann::json;
using upgrade_steps::ChangeFor;
using upgrade_steps::HasLabel;
using upgrade_steps::HasOurTaint;
using upgrade_steps::Labels;
using upgrade_steps::WithoutOurTaint;

constexpr char kVersionLabelPrefix[] = "kmm.node.kubernetes.io/version-module.";
// Past this many entries, done nodes are left out of status.nodes (their labels say they are
// done): a status of thousands of entries would crowd etcd's 1.5 MiB object limit.
constexpr size_t kMaxListedNodes = 1000;

// Another DeviceConfig's version label is on the node: the shared taint may be its.
bool OtherVersionLabel(const json& node, const std::string& ours) {
  for (const auto& [key, value] : Labels(node).items()) {
    if (key != ours && absl::StartsWith(key, kVersionLabelPrefix)) return true;
  }
  return false;
}

}  // namespace

std::string VersionLabel(const DeviceConfig& dc) {
  return absl::StrCat(kVersionLabelPrefix, dc.ns, ".", dc.name);
}

std::string VersionReadyLabel(const DeviceConfig& dc) {
  return absl::StrCat("kmm.node.kubernetes.io/", dc.ns, ".", dc.name, ".version.ready");
}

std::string DrainLabel(const DeviceConfig& dc) {
  return absl::StrCat("k8s.aws/driver-drain.", dc.ns, ".", dc.name);
}

const char* StateName(NodeUpgradeState s) {
  switch (s) {
    case NodeUpgradeState::kPending:
      return "pending";
    case NodeUpgradeState::kDraining:
      return "draining";
    case NodeUpgradeState::kUpgrading:
      return "upgrading";
    case NodeUpgradeState::kDone:
      return "done";
    case NodeUpgradeState::kFailed:
      return "failed";
  }
  return "pending";
}

json ToJson(const NodeUpgrade& n) {
  json j = {{"name", n.node},
            {"driverVersion", n.version},
            {"state", StateName(n.state)},
            {"since", k8s::FormatRfc3339(n.since)}};
  if (!n.reason.empty()) j["reason"] = n.reason;
  return j;
}

std::vector<NodeUpgrade> ParseNodeUpgrades(const json& status_nodes) {
  std::vector<NodeUpgrade> out;
  if (!status_nodes.is_array()) return out;
  for (const json& e : status_nodes) {
    NodeUpgrade n;
    n.node = StringMember(e, "name");
    n.version = StringMember(e, "driverVersion");
    const std::string state = StringMember(e, "state");
    bool known = false;
    for (NodeUpgradeState s :
         {NodeUpgradeState::kPending, NodeUpgradeState::kDraining, NodeUpgradeState::kUpgrading,
          NodeUpgradeState::kDone, NodeUpgradeState::kFailed}) {
      if (state == StateName(s)) {
        n.state = s;
        known = true;
      }
    }
    auto since = k8s::ParseTime(StringMember(e, "since"));
    if (!known || !since.ok() || n.node.empty()) continue;
    n.since = *since;
    out.push_back(std::move(n));
  }
  return out;
}

json NodeChange::Patch() const {
  json meta = {{"resourceVersion", resource_version}};
  if (!labels.empty()) {
    json l = json::object();
    for (const auto& [k, v] : labels) l[k] = v ? json(*v) : json(nullptr);
    meta["labels"] = std::move(l);
  }
  json patch = {{"metadata", std::move(meta)}};
  if (taints) patch["spec"]["taints"] = *taints;
  // Uncordoning removes the field, as kubectl uncordon leaves it.
  if (unschedulable) patch["spec"]["unschedulable"] = *unschedulable ? json(true) : json(nullptr);
  return patch;
}

UpgradeProgress Progress(const UpgradePlan& plan, absl::Time now) {
  UpgradeProgress p;
  p.pending = plan.pending;
  p.upgrading = plan.upgrading;
  p.done = plan.done;
  p.failed = plan.failed;
  p.draining = plan.draining;
  p.evicted = plan.evicted;
  p.eviction_refused = plan.eviction_refused;
  p.deleted = plan.deleted;
  p.drain_durations = plan.drain_durations;
  for (const NodeUpgrade& n : plan.nodes) {
    if (n.state == NodeUpgradeState::kUpgrading) {
      p.longest_upgrading = std::max(p.longest_upgrading, now - n.since);
    }
  }
  return p;
}

UpgradePlan PlanUpgrade(const DeviceConfig& dc, const std::vector<json>& nodes,
                        const std::vector<NodeUpgrade>& previous, absl::Time now,
                        const NodePods& pods, bool retry_failed) {
  namespace steps = upgrade_steps;
  const steps::Target target = steps::TargetOf(dc);
  std::vector<NodeUpgrade> kept = previous;
  if (retry_failed) {  // failed nodes start over, their timers too
    std::erase_if(kept, [](const NodeUpgrade& n) { return n.state == NodeUpgradeState::kFailed; });
  }
  std::vector<steps::NodeStep> decided = steps::Admit(
      steps::ClassifyMatching(dc, nodes, kept, now, pods), target, dc.spec.upgrade, now);
  steps::Summary sum = steps::Summarize(decided, target, dc.spec.upgrade);

  UpgradePlan plan;
  for (steps::NodeStep& s : decided) {
    if (s.change) plan.changes.push_back(std::move(*s.change));
    if (s.transition) plan.transitions.push_back(std::move(*s.transition));
    if (s.drain) plan.drains.push_back(std::move(*s.drain));
    if (s.drained_after) plan.drain_durations.push_back(*s.drained_after);
    // Pass again when the first upgrading node runs out of time.
    if (s.deadline && (!plan.recheck_after || *s.deadline - now < *plan.recheck_after)) {
      plan.recheck_after = *s.deadline - now;
    }
    plan.nodes.push_back(std::move(s.entry));
  }
  std::sort(plan.nodes.begin(), plan.nodes.end(),
            [](const NodeUpgrade& a, const NodeUpgrade& b) { return a.node < b.node; });
  if (plan.nodes.size() > kMaxListedNodes) {
    std::erase_if(plan.nodes,
                  [](const NodeUpgrade& n) { return n.state == NodeUpgradeState::kDone; });
  }
  // Nodes that left the selector carry our label no longer.
  for (NodeChange& c : PlanCleanup(dc, nodes, /*all=*/false)) plan.changes.push_back(std::move(c));

  std::tie(plan.done, plan.upgrading, plan.pending, plan.failed, plan.draining) =
      std::tie(sum.done, sum.upgrading, sum.pending, sum.failed, sum.draining);
  plan.condition_status = std::move(sum.condition_status);
  plan.condition_reason = std::move(sum.condition_reason);
  plan.condition_message = std::move(sum.condition_message);
  plan.degraded = std::move(sum.degraded);
  return plan;
}

std::vector<NodeChange> PlanCleanup(const DeviceConfig& dc, const std::vector<json>& nodes,
                                    bool all) {
  const std::string version_label = VersionLabel(dc);
  const std::string ready_label = VersionReadyLabel(dc);
  const std::string drain_label = DrainLabel(dc);
  std::vector<NodeChange> out;
  for (const json& n : nodes) {
    const bool matches = SelectorMatches(dc.spec.selector, Labels(n));
    if (!all && matches) continue;
    const bool cordoned = HasLabel(n, drain_label);
    if (cordoned) {  // we cordoned it: uncordon
      NodeChange c = ChangeFor(n);
      c.labels[drain_label] = std::nullopt;
      c.unschedulable = false;
      out.push_back(std::move(c));
    }
    const bool ours = HasLabel(n, version_label);
    // A tainted node of ours: labelled by us, or (all) selected by us.
    const bool untaint =
        HasOurTaint(n) && (ours || (all && matches)) && !OtherVersionLabel(n, version_label);
    if (!ours && !untaint) continue;
    NodeChange c = cordoned ? std::move(out.back()) : ChangeFor(n);
    if (cordoned) out.pop_back();
    if (ours) {
      c.labels[version_label] = std::nullopt;
      if (HasLabel(n, ready_label)) c.labels[ready_label] = std::nullopt;
    }
    if (untaint) c.taints = WithoutOurTaint(n);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace neuron::op
