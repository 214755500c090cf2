// File: lib/operator/upgrade.cc
#include "lib/operator/upgrade.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/json_access.h"
#include "lib/k8s/k8s_time.h"

namespace neuron::op {
namespace {

using nlohmann::json;

constexpr char kVersionLabelPrefix[] = "kmm.node.kubernetes.io/version-module.";
// Past this many entries, done nodes are left out of status.nodes (their labels say they are
// done): a status of thousands of entries would crowd etcd's 1.5 MiB object limit.
constexpr size_t kMaxListedNodes = 1000;
// Names in a condition message, then "and N more".
constexpr size_t kNamesShown = 5;

const json& Labels(const json& node) {
  static const json kNone = json::object();
  const json* l = MemberAt(node, {"metadata", "labels"});
  return l != nullptr && l->is_object() ? *l : kNone;
}

std::string LabelOf(const json& node, const std::string& key) {
  return StringMember(Labels(node), key);
}

bool HasLabel(const json& node, const std::string& key) { return Labels(node).contains(key); }

std::string NameOf(const json& node) { return StringAt(node, {"metadata", "name"}); }

json TaintsOf(const json& node) {
  const json* t = MemberAt(node, {"spec", "taints"});
  return t != nullptr && t->is_array() ? *t : json::array();
}

bool IsOurTaint(const json& t) { return StringMember(t, "key") == kUpgradeTaintKey; }

bool HasOurTaint(const json& node) {
  const json taints = TaintsOf(node);
  return std::any_of(taints.begin(), taints.end(), IsOurTaint);
}

json WithOurTaint(const json& node) {
  json taints = TaintsOf(node);
  taints.push_back({{"key", kUpgradeTaintKey}, {"value", "true"}, {"effect", "NoExecute"}});
  return taints;
}

json WithoutOurTaint(const json& node) {
  json out = json::array();
  for (const json& t : TaintsOf(node)) {
    if (!IsOurTaint(t)) out.push_back(t);
  }
  return out;
}

// Another DeviceConfig's version label is on the node: the shared taint may be its.
bool OtherVersionLabel(const json& node, const std::string& ours) {
  for (const auto& [key, value] : Labels(node).items()) {
    if (key != ours && absl::StartsWith(key, kVersionLabelPrefix)) return true;
  }
  return false;
}

NodeChange ChangeFor(const json& node) {
  NodeChange c;
  c.node = NameOf(node);
  c.resource_version = StringAt(node, {"metadata", "resourceVersion"});
  return c;
}

std::string Names(const std::vector<std::string>& names) {
  if (names.size() <= kNamesShown) return absl::StrJoin(names, ", ");
  return absl::StrCat(
      absl::StrJoin(std::vector<std::string>(names.begin(), names.begin() + kNamesShown), ", "),
      " and ", names.size() - kNamesShown, " more");
}

}  // namespace

std::string VersionLabel(const DeviceConfig& dc) {
  return absl::StrCat(kVersionLabelPrefix, dc.ns, ".", dc.name);
}

std::string VersionReadyLabel(const DeviceConfig& dc) {
  return absl::StrCat("kmm.node.kubernetes.io/", dc.ns, ".", dc.name, ".version.ready");
}

const char* StateName(NodeUpgradeState s) {
  switch (s) {
    case NodeUpgradeState::kPending:
      return "pending";
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
    for (NodeUpgradeState s : {NodeUpgradeState::kPending, NodeUpgradeState::kUpgrading,
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
  if (taints) patch["spec"] = {{"taints", *taints}};
  return patch;
}

UpgradeProgress Progress(const UpgradePlan& plan, absl::Time now) {
  UpgradeProgress p{plan.pending, plan.upgrading, plan.done, plan.failed};
  for (const NodeUpgrade& n : plan.nodes) {
    if (n.state == NodeUpgradeState::kUpgrading) {
      p.longest_upgrading = std::max(p.longest_upgrading, now - n.since);
    }
  }
  return p;
}

UpgradePlan PlanUpgrade(const DeviceConfig& dc, const std::vector<json>& nodes,
                        const std::vector<NodeUpgrade>& previous, absl::Time now) {
  const std::string target = dc.spec.driver_version;
  const std::string version_label = VersionLabel(dc);
  const std::string ready_label = VersionReadyLabel(dc);
  const UpgradePolicy& policy = dc.spec.upgrade;

  std::map<std::string, const NodeUpgrade*> prev;
  for (const NodeUpgrade& p : previous) {
    if (p.version == target) prev[p.node] = &p;
  }
  auto prev_state = [&](const std::string& node) -> std::optional<NodeUpgradeState> {
    auto it = prev.find(node);
    if (it == prev.end()) return std::nullopt;
    return it->second->state;
  };
  // The time a node entered `state`: kept from the previous status when it was already there.
  auto since = [&](const std::string& node, std::initializer_list<NodeUpgradeState> same) {
    auto it = prev.find(node);
    if (it != prev.end() && std::find(same.begin(), same.end(), it->second->state) != same.end()) {
      return it->second->since;
    }
    return now;
  };

  UpgradePlan plan;
  std::vector<const json*> candidates;  // pending: an older version label
  std::vector<std::string> upgrading_names, failed_names;
  std::string first_failure;

  std::vector<const json*> matching;
  for (const json& n : nodes) {
    if (SelectorMatches(dc.spec.selector, Labels(n))) matching.push_back(&n);
  }
  std::sort(matching.begin(), matching.end(),
            [](const json* a, const json* b) { return NameOf(*a) < NameOf(*b); });

  auto record = [&](const std::string& node, NodeUpgradeState state, absl::Time at,
                    std::string reason, std::string event) {
    if (prev_state(node) != state && !event.empty()) {
      plan.transitions.push_back({node, state, std::move(event)});
    }
    plan.nodes.push_back({node, target, state, at, std::move(reason)});
  };

  for (const json* n : matching) {
    const std::string name = NameOf(*n);
    const bool labelled = HasLabel(*n, version_label);
    const std::string wanted = LabelOf(*n, version_label);
    const bool tainted = HasOurTaint(*n);

    if (labelled && wanted == target && LabelOf(*n, ready_label) == target) {
      if (tainted) {
        NodeChange c = ChangeFor(*n);
        c.taints = WithoutOurTaint(*n);
        plan.changes.push_back(std::move(c));
      }
      ++plan.done;
      // A node found done without having been seen upgrading is no news.
      record(name, NodeUpgradeState::kDone, since(name, {NodeUpgradeState::kDone}), "",
             prev_state(name) ? absl::StrCat("driver ", target, " is ready; taint removed") : "");
      continue;
    }

    if (labelled && wanted == target) {  // under way: KMM has not reported the version ready
      const absl::Time started =
          since(name, {NodeUpgradeState::kUpgrading, NodeUpgradeState::kFailed});
      if (prev_state(name) == NodeUpgradeState::kFailed || now - started >= policy.node_timeout) {
        const absl::Time failed_at =
            prev_state(name) == NodeUpgradeState::kFailed ? prev.at(name)->since : now;
        const std::string reason = absl::StrCat(
            "driver ", target, " not ready within ", absl::FormatDuration(policy.node_timeout),
            " (KMM has not set ", ready_label, "=", target, ")",
            tainted ? "; the taint stays so no workload lands on it" : "",
            ": check the KMM module loader pod on the node");
        ++plan.failed;
        failed_names.push_back(name);
        if (first_failure.empty()) first_failure = absl::StrCat(name, ": ", reason);
        record(name, NodeUpgradeState::kFailed, failed_at, reason, reason);
        continue;
      }
      const absl::Duration left = started + policy.node_timeout - now;
      if (!plan.recheck_after || left < *plan.recheck_after) plan.recheck_after = left;
      ++plan.upgrading;
      upgrading_names.push_back(name);
      record(name, NodeUpgradeState::kUpgrading, started,
             absl::StrCat("waiting for KMM to load driver ", target), "");
      continue;
    }

    if (!labelled && !tainted && !policy.paused) {
      // First seen: nothing of ours runs there, so nothing to drain.
      NodeChange c = ChangeFor(*n);
      c.labels[version_label] = target;
      plan.changes.push_back(std::move(c));
      plan.recheck_after =
          std::min(plan.recheck_after.value_or(policy.node_timeout), policy.node_timeout);
      ++plan.upgrading;
      upgrading_names.push_back(name);
      record(name, NodeUpgradeState::kUpgrading, now,
             absl::StrCat("first install of driver ", target, " (no taint: no workload uses it)"),
             absl::StrCat("first install: labelled for driver ", target, " without a taint"));
      continue;
    }
    candidates.push_back(n);
  }

  // Start pending nodes while there is room. Nodes already tainted (a rollout before this one
  // left them so) go first: their workloads are gone already.
  std::stable_sort(candidates.begin(), candidates.end(), [](const json* a, const json* b) {
    return HasOurTaint(*a) && !HasOurTaint(*b);
  });
  const bool stopped = plan.failed > 0;
  for (const json* n : candidates) {
    const std::string name = NameOf(*n);
    const std::string from = LabelOf(*n, version_label);
    if (!stopped && !policy.paused && plan.upgrading < policy.max_parallel) {
      NodeChange c = ChangeFor(*n);
      c.labels[version_label] = target;
      if (!HasOurTaint(*n)) c.taints = WithOurTaint(*n);
      plan.changes.push_back(std::move(c));
      plan.recheck_after =
          std::min(plan.recheck_after.value_or(policy.node_timeout), policy.node_timeout);
      ++plan.upgrading;
      upgrading_names.push_back(name);
      const std::string what =
          absl::StrCat("tainted ", kUpgradeTaintKey, "=true:NoExecute and labelled for driver ",
                       target, from.empty() ? "" : absl::StrCat(" (from ", from, ")"));
      record(name, NodeUpgradeState::kUpgrading, now, what, what);
      continue;
    }
    const std::string why =
        stopped ? absl::StrCat("rollout stopped: ", failed_names.front(), " failed")
        : policy.paused
            ? std::string("rollout paused (spec.upgradePolicy.paused)")
            : absl::StrCat("waiting for a slot (maxParallel ", policy.max_parallel, ")");
    ++plan.pending;
    record(name, NodeUpgradeState::kPending, since(name, {NodeUpgradeState::kPending}), why, "");
  }
  std::sort(plan.nodes.begin(), plan.nodes.end(),
            [](const NodeUpgrade& a, const NodeUpgrade& b) { return a.node < b.node; });
  if (plan.nodes.size() > kMaxListedNodes) {
    std::erase_if(plan.nodes,
                  [](const NodeUpgrade& n) { return n.state == NodeUpgradeState::kDone; });
  }

  // Nodes that left the selector carry our label no longer.
  for (NodeChange& c : PlanCleanup(dc, nodes, /*all=*/false)) plan.changes.push_back(std::move(c));

  const int total = plan.done + plan.upgrading + plan.pending + plan.failed;
  const std::string counts =
      absl::StrCat(plan.done, " of ", total, " nodes on driver ", target, "; ", plan.upgrading,
                   " upgrading, ", plan.pending, " pending, ", plan.failed, " failed");
  if (plan.failed > 0) {
    plan.condition_status = "True";
    plan.condition_reason = "NodeFailed";
    plan.condition_message =
        absl::StrCat("stopped: ", Names(failed_names), " failed (", counts,
                     "). The rollout resumes once KMM reports the driver ready there; to roll "
                     "back, set driverVersion to the previous version");
    plan.degraded = absl::StrCat("driver upgrade stopped at ", first_failure);
  } else if (plan.pending > 0 && policy.paused) {
    plan.condition_status = "True";
    plan.condition_reason = "Paused";
    plan.condition_message =
        absl::StrCat("paused (", counts, "): set spec.upgradePolicy.paused to false to go on");
  } else if (plan.pending + plan.upgrading > 0) {
    plan.condition_status = "True";
    plan.condition_reason = "RollingOut";
    plan.condition_message = absl::StrCat(counts, "; upgrading: ", Names(upgrading_names));
  } else {
    plan.condition_status = "False";
    plan.condition_reason = "UpToDate";
    plan.condition_message = absl::StrCat("every matching node (", total, ") runs driver ", target);
  }
  return plan;
}

std::vector<NodeChange> PlanCleanup(const DeviceConfig& dc, const std::vector<json>& nodes,
                                    bool all) {
  const std::string version_label = VersionLabel(dc);
  const std::string ready_label = VersionReadyLabel(dc);
  std::vector<NodeChange> out;
  for (const json& n : nodes) {
    const bool matches = SelectorMatches(dc.spec.selector, Labels(n));
    if (!all && matches) continue;
    const bool ours = HasLabel(n, version_label);
    // A tainted node of ours: labelled by us, or (all) selected by us.
    const bool untaint =
        HasOurTaint(n) && (ours || (all && matches)) && !OtherVersionLabel(n, version_label);
    if (!ours && !untaint) continue;
    NodeChange c = ChangeFor(n);
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
