// File: lib/operator/upgrade_steps.cc
#include "lib/operator/upgrade_steps.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/json_access.h"
#include "lib/k8s/object_view.h"

namespace neuron::op::upgrade_steps {
namespace {

using nlohmann::json;

// Names in a condition message, then "and N more".
constexpr size_t kNamesShown = 5;
// How soon a draining node is looked at again: evictions a budget refused are retried.
constexpr absl::Duration kDrainPoll = absl::Seconds(5);
// A node just cordoned is looked at again at once, to list and evict its pods.
constexpr absl::Duration kDrainStartPoll = absl::Seconds(1);

// "ns/a, ns/b (it has emptyDir ...)" for reasons and Events.
std::string PodNames(const std::vector<DrainPod>& pods) {
  std::vector<std::string> names;
  for (const DrainPod& p : pods) {
    names.push_back(absl::StrCat(p.ns, "/", p.name,
                                 p.blocker.empty() ? "" : absl::StrCat(" (", p.blocker, ")"),
                                 p.terminating ? " (terminating)" : ""));
  }
  if (names.size() <= kNamesShown) return absl::StrJoin(names, ", ");
  return absl::StrCat(
      absl::StrJoin(std::vector<std::string>(names.begin(), names.begin() + kNamesShown), ", "),
      " and ", names.size() - kNamesShown, " more");
}

// The pods an eviction may be sent for now.
std::vector<DrainPod> Evictable(const std::vector<DrainPod>& pods) {
  std::vector<DrainPod> out;
  for (const DrainPod& p : pods) {
    if (p.blocker.empty() && !p.terminating) out.push_back(p);
  }
  return out;
}

const json& TaintsOf(const json& node) { return k8s::NodeView(node).taints(); }

bool IsOurTaint(const json& t) { return StringMember(t, "key") == kUpgradeTaintKey; }

std::string Names(const std::vector<std::string>& names) {
  if (names.size() <= kNamesShown) return absl::StrJoin(names, ", ");
  return absl::StrCat(
      absl::StrJoin(std::vector<std::string>(names.begin(), names.begin() + kNamesShown), ", "),
      " and ", names.size() - kNamesShown, " more");
}

// The node enters `state` (or stays there) this pass; an Event when the state is new to it and
// there is news to tell.
void Enter(NodeStep& s, NodeUpgradeState state, absl::Time since, std::string reason,
           std::string event) {
  if (s.previous != state && !event.empty()) {
    s.transition = Transition{s.entry.node, state, std::move(event)};
  }
  s.entry.state = state;
  s.entry.since = since;
  s.entry.reason = std::move(reason);
}

// Labelled for the target, which KMM has not reported ready: upgrading until nodeTimeout has
// passed since it started, then failed (and failed it stays, with its time, until KMM reports).
void ClassifyUnderWay(NodeStep& s, const NodeUpgrade* previous, const Target& t,
                      const UpgradePolicy& policy, absl::Time now) {
  const bool was_failed = s.previous == NodeUpgradeState::kFailed;
  const absl::Time started =
      s.previous == NodeUpgradeState::kUpgrading || was_failed ? previous->since : now;
  if (was_failed || now - started >= policy.node_timeout) {
    s.cls = NodeClass::kFailed;
    std::string reason = absl::StrCat(
        "driver ", t.version, " not ready within ", absl::FormatDuration(policy.node_timeout),
        " (KMM has not set ", t.ready_label, "=", t.version, ")",
        s.tainted ? "; the taint stays so no workload lands on it" : "",
        ": check the KMM module loader pod on the node");
    Enter(s, NodeUpgradeState::kFailed, was_failed ? previous->since : now, reason, reason);
    return;
  }
  s.cls = NodeClass::kUpgrading;
  s.deadline = started + policy.node_timeout;
  Enter(s, NodeUpgradeState::kUpgrading, started,
        absl::StrCat("waiting for KMM to load driver ", t.version), "");
}

// Labels a drained node for the target: KMM moves its driver now.
void LabelDrained(NodeStep& s, const Target& t, const UpgradePolicy& policy, absl::Time now,
                  const std::string& what) {
  if (!s.change) s.change = ChangeFor(*s.node);
  s.change->labels[t.version_label] = t.version;
  s.cls = NodeClass::kUpgrading;
  s.deadline = now + policy.node_timeout;
  Enter(s, NodeUpgradeState::kUpgrading, now, what, what);
}

// Cordoned for the target, not yet labelled: wait for its pods to leave (evicting them), then
// label it; past drain.timeout fail it, or with drain.force delete what is left.
void ClassifyDraining(NodeStep& s, const NodeUpgrade* previous, const Target& t,
                      const UpgradePolicy& policy, absl::Time now,
                      const std::vector<DrainPod>& left) {
  const bool was_failed = s.previous == NodeUpgradeState::kFailed;
  const absl::Time started =
      s.previous == NodeUpgradeState::kDraining || was_failed ? previous->since : now;
  if (left.empty() && !was_failed) {
    s.drained_after = now - started;
    LabelDrained(s, t, policy, now,
                 absl::StrCat("drained; labelled for driver ", t.version,
                              s.from.empty() ? "" : absl::StrCat(" (from ", s.from, ")")));
    return;
  }
  const std::string timeout = absl::FormatDuration(policy.drain.timeout);
  if (was_failed || (now - started >= policy.drain.timeout && !policy.drain.force)) {
    s.cls = NodeClass::kFailed;
    const std::string reason = absl::StrCat(
        "drain timed out after ", timeout,
        "; still on the node: ", left.empty() ? std::string("nothing now") : PodNames(left),
        ". It stays cordoned; set the DeviceConfig annotation ", kRetryUpgradeAnnotation,
        " to a new value to retry");
    Enter(s, NodeUpgradeState::kFailed, was_failed ? previous->since : now, reason, reason);
    return;
  }
  s.cls = NodeClass::kDraining;
  if (now - started >= policy.drain.timeout) {  // drain.force
    s.drain = DrainOrder{s.entry.node, {}, left};
    s.deadline = now + kDrainPoll;
    const std::string what = absl::StrCat("drain timed out after ", timeout, "; deleting ",
                                          left.size(), " pods (drain.force): ", PodNames(left));
    Enter(s, NodeUpgradeState::kDraining, started, what, what);
    return;
  }
  s.drain = DrainOrder{s.entry.node, Evictable(left), {}};
  s.deadline = std::min(started + policy.drain.timeout, now + kDrainPoll);
  Enter(s, NodeUpgradeState::kDraining, started,
        absl::StrCat("waiting for ", left.size(), " pods to leave: ", PodNames(left)), "");
}

// A candidate starts, draining first: cordoned and marked. What runs there is listed on the
// next pass (the mark says which nodes to look at), which evicts it or labels the node.
void StartDrain(NodeStep& s, const Target& t, absl::Time now) {
  s.change = ChangeFor(*s.node);
  s.change->labels[t.drain_label] = t.version;
  s.change->unschedulable = true;
  s.cls = NodeClass::kDraining;
  s.deadline = now + kDrainStartPoll;
  const std::string what = absl::StrCat("cordoned to drain for driver ", t.version);
  Enter(s, NodeUpgradeState::kDraining, now, what, what);
}

// A candidate starts: tainted (unless it is already) and labelled for the target.
void Start(NodeStep& s, const Target& t, const UpgradePolicy& policy, absl::Time now) {
  s.change = ChangeFor(*s.node);
  s.change->labels[t.version_label] = t.version;
  if (!s.tainted) s.change->taints = WithOurTaint(*s.node);
  s.deadline = now + policy.node_timeout;
  const std::string what =
      absl::StrCat("tainted ", kUpgradeTaintKey, "=true:NoExecute and labelled for driver ",
                   t.version, s.from.empty() ? "" : absl::StrCat(" (from ", s.from, ")"));
  Enter(s, NodeUpgradeState::kUpgrading, now, what, what);
}

}  // namespace

const json& Labels(const json& node) { return k8s::NodeView(node).labels(); }

std::string LabelOf(const json& node, const std::string& key) {
  return std::string(k8s::NodeView(node).label(key));
}

bool HasLabel(const json& node, const std::string& key) {
  return k8s::NodeView(node).has_label(key);
}

std::string NameOf(const json& node) { return std::string(k8s::NodeView(node).name()); }

bool HasOurTaint(const json& node) { return k8s::NodeView(node).has_taint(kUpgradeTaintKey); }

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

NodeChange ChangeFor(const json& node) {
  NodeChange c;
  c.node = NameOf(node);
  c.resource_version = k8s::NodeView(node).resource_version();
  return c;
}

Target TargetOf(const DeviceConfig& dc) {
  return {dc.spec.driver_version, VersionLabel(dc), VersionReadyLabel(dc), DrainLabel(dc)};
}

const char* ClassName(NodeClass c) {
  switch (c) {
    case NodeClass::kDone:
      return "done";
    case NodeClass::kDraining:
      return "draining";
    case NodeClass::kUpgrading:
      return "upgrading";
    case NodeClass::kFailed:
      return "failed";
    case NodeClass::kFirstInstall:
      return "first-install";
    case NodeClass::kCandidate:
      return "candidate";
  }
  return "candidate";
}

// Long on purpose: one branch per state a node can be found in, in the order they are tested.
NodeStep Classify(const json& node, const NodeUpgrade* previous, const Target& t,
                  const UpgradePolicy& policy, absl::Time now, const std::vector<DrainPod>* pods) {
  static const std::vector<DrainPod> kNoPods;
  NodeStep s;
  s.node = &node;
  s.entry.node = NameOf(node);
  s.entry.version = t.version;
  if (previous != nullptr) s.previous = previous->state;
  s.tainted = HasOurTaint(node);
  s.from = LabelOf(node, t.version_label);
  s.drain_for = LabelOf(node, t.drain_label);
  const bool labelled = HasLabel(node, t.version_label);

  if (labelled && s.from == t.version && LabelOf(node, t.ready_label) == t.version) {
    s.cls = NodeClass::kDone;
    if (s.tainted) {
      s.change = ChangeFor(node);
      s.change->taints = WithoutOurTaint(node);
    }
    if (!s.drain_for.empty()) {  // cordoned by us: uncordon
      if (!s.change) s.change = ChangeFor(node);
      s.change->labels[t.drain_label] = std::nullopt;
      s.change->unschedulable = false;
    }
    // A node found done without having been seen upgrading is no news.
    const bool was_done = s.previous == NodeUpgradeState::kDone;
    Enter(
        s, NodeUpgradeState::kDone, was_done ? previous->since : now, "",
        previous != nullptr ? absl::StrCat("driver ", t.version, " is ready; taint removed") : "");
  } else if (labelled && s.from == t.version) {
    ClassifyUnderWay(s, previous, t, policy, now);
  } else if (s.drain_for == t.version) {
    ClassifyDraining(s, previous, t, policy, now, pods != nullptr ? *pods : kNoPods);
  } else if (!labelled && !s.tainted && s.drain_for.empty() && !policy.paused) {
    // First seen: nothing of ours runs there, so nothing to drain.
    s.cls = NodeClass::kFirstInstall;
    s.change = ChangeFor(node);
    s.change->labels[t.version_label] = t.version;
    s.deadline = now + policy.node_timeout;
    Enter(s, NodeUpgradeState::kUpgrading, now,
          absl::StrCat("first install of driver ", t.version, " (no taint: no workload uses it)"),
          absl::StrCat("first install: labelled for driver ", t.version, " without a taint"));
  } else {
    // An older version (or, paused or tainted, no version yet): admit decides.
    s.cls = NodeClass::kCandidate;
    const bool was_pending = s.previous == NodeUpgradeState::kPending;
    Enter(s, NodeUpgradeState::kPending, was_pending ? previous->since : now, "", "");
  }
  return s;
}

std::vector<NodeStep> ClassifyMatching(const DeviceConfig& dc, const std::vector<json>& nodes,
                                       const std::vector<NodeUpgrade>& previous, absl::Time now,
                                       const NodePods& pods) {
  const Target target = TargetOf(dc);
  std::map<std::string, const NodeUpgrade*> prev;  // entries about the target version
  for (const NodeUpgrade& p : previous) {
    if (p.version == target.version) prev[p.node] = &p;
  }
  std::vector<const json*> matching;
  for (const json& n : nodes) {
    if (SelectorMatches(dc.spec.selector, Labels(n))) matching.push_back(&n);
  }
  std::sort(matching.begin(), matching.end(),
            [](const json* a, const json* b) { return NameOf(*a) < NameOf(*b); });
  std::vector<NodeStep> steps;
  for (const json* n : matching) {
    auto it = prev.find(NameOf(*n));
    auto p = pods.find(NameOf(*n));
    steps.push_back(Classify(*n, it == prev.end() ? nullptr : it->second, target, dc.spec.upgrade,
                             now, p == pods.end() ? nullptr : &p->second));
  }
  return steps;
}

std::vector<NodeStep> Admit(std::vector<NodeStep> steps, const Target& t,
                            const UpgradePolicy& policy, absl::Time now) {
  // The nodes classify decided keep their order; the candidates go after them.
  auto candidates = std::stable_partition(
      steps.begin(), steps.end(), [](const NodeStep& s) { return s.cls != NodeClass::kCandidate; });
  // Nodes already tainted (a rollout before this one left them so) go first: their workloads
  // are gone already.
  std::stable_sort(candidates, steps.end(),
                   [](const NodeStep& a, const NodeStep& b) { return a.tainted && !b.tainted; });
  int upgrading = static_cast<int>(std::count_if(steps.begin(), candidates, [](const NodeStep& s) {
    return s.entry.state == NodeUpgradeState::kUpgrading ||
           s.entry.state == NodeUpgradeState::kDraining;
  }));
  auto failed = std::find_if(steps.begin(), candidates, [](const NodeStep& s) {
    return s.entry.state == NodeUpgradeState::kFailed;
  });
  const bool stopped = failed != candidates;
  for (auto s = candidates; s != steps.end(); ++s) {
    if (!stopped && !policy.paused && upgrading < policy.max_parallel) {
      if (policy.drain.enable) {
        StartDrain(*s, t, now);
      } else {
        Start(*s, t, policy, now);
      }
      ++upgrading;
      continue;
    }
    s->entry.reason = stopped ? absl::StrCat("rollout stopped: ", failed->entry.node, " failed")
                      : policy.paused ? std::string("rollout paused (spec.upgradePolicy.paused)")
                                      : absl::StrCat("waiting for a slot (maxParallel ",
                                                     policy.max_parallel, ")");
  }
  return steps;
}

Summary Summarize(const std::vector<NodeStep>& steps, const Target& t,
                  const UpgradePolicy& policy) {
  // The nodes in each state, in the order they were decided.
  std::map<NodeUpgradeState, std::vector<const NodeUpgrade*>> in;
  for (const NodeStep& step : steps) in[step.entry.state].push_back(&step.entry);
  auto names = [&](NodeUpgradeState state) {
    std::vector<std::string> out;
    for (const NodeUpgrade* e : in[state]) out.push_back(e->node);
    return Names(out);
  };
  Summary s;
  s.done = static_cast<int>(in[NodeUpgradeState::kDone].size());
  s.upgrading = static_cast<int>(in[NodeUpgradeState::kUpgrading].size());
  s.pending = static_cast<int>(in[NodeUpgradeState::kPending].size());
  s.failed = static_cast<int>(in[NodeUpgradeState::kFailed].size());
  s.draining = static_cast<int>(in[NodeUpgradeState::kDraining].size());
  const int total = s.done + s.upgrading + s.pending + s.failed + s.draining;
  const std::string counts =
      absl::StrCat(s.done, " of ", total, " nodes on driver ", t.version, "; ",
                   s.draining > 0 ? absl::StrCat(s.draining, " draining, ") : "", s.upgrading,
                   " upgrading, ", s.pending, " pending, ", s.failed, " failed");
  s.condition_status = "True";
  if (s.failed > 0) {
    const NodeUpgrade& first = *in[NodeUpgradeState::kFailed].front();
    s.condition_reason = "NodeFailed";
    s.condition_message =
        absl::StrCat("stopped: ", names(NodeUpgradeState::kFailed), " failed (", counts,
                     "). The rollout resumes once KMM reports the driver ready there, or when "
                     "the DeviceConfig annotation ",
                     kRetryUpgradeAnnotation,
                     " is set to a new value (failed nodes start over); to roll back, set "
                     "driverVersion to the previous version");
    s.degraded = absl::StrCat("driver upgrade stopped at ", first.node, ": ", first.reason);
  } else if (s.pending > 0 && policy.paused) {
    s.condition_reason = "Paused";
    s.condition_message =
        absl::StrCat("paused (", counts, "): set spec.upgradePolicy.paused to false to go on");
  } else if (s.pending + s.upgrading + s.draining > 0) {
    s.condition_reason = "RollingOut";
    s.condition_message = absl::StrCat(
        counts, "; upgrading: ", names(NodeUpgradeState::kUpgrading),
        s.draining > 0 ? absl::StrCat("; draining: ", names(NodeUpgradeState::kDraining)) : "");
  } else {
    s.condition_status = "False";
    s.condition_reason = "UpToDate";
    s.condition_message = absl::StrCat("every matching node (", total, ") runs driver ", t.version);
  }
  return s;
}

}  // namespace neuron::op::upgrade_steps
