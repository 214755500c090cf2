// File: tests/operator/upgrade_steps_test.cc
// PlanUpgrade step by step, one table row per situation: the nodes (labels, our taint, in or out
// of the selector) and the previous status.nodes go in; out come each node's class (Classify
// alone) and its state, reason and time, the Node changes, the Events, the recheck time, the
// counts and the conditions (PlanUpgrade, i.e. Classify -> Admit -> Summarize). No API server:
// the steps are pure.
#include "lib/operator/upgrade_steps.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "catch2/catch.hpp"

// The table rows name only the fields that matter to them (designated initializers; the rest
// keep their defaults), which GCC before 14 reports as missing initializers.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace neuron::op {
namespace {

using nlohmann::json;
using upgrade_steps::NodeClass;
using State = NodeUpgradeState;

constexpr char kVersionLabel[] = "kmm.node.kubernetes.io/version-module.ops.neuron";
constexpr char kReadyLabel[] = "kmm.node.kubernetes.io/ops.neuron.version.ready";
constexpr char kOld[] = "2.28.0";
constexpr char kNew[] = "2.29.0";
constexpr char kOtherTaint[] = "example.com/maintenance";  // on every node; must survive
const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

// A Node in the cache: in the selector unless told, labelled for / reported ready at a version
// ("" = no label), maybe carrying our taint.
struct NodeSpec {
  std::string name;
  std::string labelled;
  std::string ready;
  bool tainted = false;
  bool selected = true;
};

json NodeJson(const NodeSpec& n) {
  json labels = json::object();
  if (n.selected) labels["neuron"] = "yes";
  if (!n.labelled.empty()) labels[kVersionLabel] = n.labelled;
  if (!n.ready.empty()) labels[kReadyLabel] = n.ready;
  json taints = json::array({{{"key", kOtherTaint}, {"effect", "NoSchedule"}}});
  if (n.tainted) {
    taints.push_back({{"key", kUpgradeTaintKey}, {"value", "true"}, {"effect", "NoExecute"}});
  }
  return {{"metadata", {{"name", n.name}, {"resourceVersion", "rv-" + n.name}, {"labels", labels}}},
          {"spec", {{"taints", taints}}}};
}

// A previous status.nodes entry, `ago` before now.
NodeUpgrade Prev(const std::string& node, State state, absl::Duration ago,
                 const std::string& version = kNew) {
  return {node, version, state, kNow - ago, "earlier"};
}

// What one node should come out as. `reason`: a substring ("" = the reason is empty).
struct NodeExpect {
  std::string name;
  NodeClass cls;
  State state;
  std::string reason;
  absl::Duration since_ago = absl::ZeroDuration();
  std::optional<absl::Duration> deadline_in;  // Classify's deadline (not for candidates)
};

// A Node patch: labels set (a value) or removed (nullopt); taints by key, or none sent.
struct ChangeExpect {
  std::string node;
  std::map<std::string, std::optional<std::string>> labels;
  std::optional<std::vector<std::string>> taints;
};

struct TransitionExpect {
  std::string node;
  State to;
  std::string message;  // substring
};

struct Row {
  std::string situation;
  UpgradePolicy policy;
  std::vector<NodeSpec> nodes;
  std::vector<NodeUpgrade> previous;
  std::vector<NodeExpect> expect_nodes;  // status.nodes, by name
  std::vector<ChangeExpect> changes;     // in order
  std::vector<TransitionExpect> transitions;
  std::optional<absl::Duration> recheck_after;
  int done = 0, upgrading = 0, pending = 0, failed = 0;
  std::string condition_status, condition_reason, condition_message;  // message: substring
  std::optional<std::string> degraded;                                // substring
};

UpgradePolicy Policy(int max_parallel = 1, bool paused = false) {
  UpgradePolicy p;
  p.max_parallel = max_parallel;
  p.paused = paused;
  return p;  // nodeTimeout: the default 15m
}

DeviceConfig Dc(const UpgradePolicy& policy) {
  DeviceConfig dc;
  dc.name = "neuron";
  dc.ns = "ops";
  dc.spec.driver_version = kNew;
  dc.spec.selector = {{"neuron", "yes"}};
  dc.spec.upgrade = policy;
  return dc;
}

std::vector<std::string> TaintKeys(const json& taints) {
  std::vector<std::string> keys;
  for (const json& t : taints) keys.push_back(t.value("key", ""));
  return keys;
}

bool Contains(const std::string& text, const std::string& part) {
  return part.empty() ? text.empty() : text.find(part) != std::string::npos;
}

const std::vector<std::string> kKept = {kOtherTaint};
const std::vector<std::string> kKeptAndOurs = {kOtherTaint, kUpgradeTaintKey};

std::vector<Row> Table() {
  const absl::Duration m15 = absl::Minutes(15);
  return {
      {.situation = "a node seen first is labelled at once, without a taint",
       .policy = Policy(),
       .nodes = {{.name = "a"}},
       .expect_nodes =
           {{"a", NodeClass::kFirstInstall, State::kUpgrading, "first install", {}, m15}},
       .changes = {{"a", {{kVersionLabel, kNew}}, std::nullopt}},
       .transitions = {{"a", State::kUpgrading, "first install: labelled for driver 2.29.0"}},
       .recheck_after = m15,
       .upgrading = 1,
       .condition_status = "True",
       .condition_reason = "RollingOut",
       .condition_message = "0 of 1 nodes on driver 2.29.0; 1 upgrading, 0 pending, 0 failed; "
                            "upgrading: a"},
      {.situation = "a node on the old version, untainted, is tainted and relabelled",
       .policy = Policy(),
       .nodes = {{.name = "a", .labelled = kOld, .ready = kOld}},
       .expect_nodes = {{"a", NodeClass::kCandidate, State::kUpgrading,
                         "tainted aws-neuron-driver-upgrade=true:NoExecute and labelled for "
                         "driver 2.29.0 (from 2.28.0)"}},
       .changes = {{"a", {{kVersionLabel, kNew}}, kKeptAndOurs}},
       .transitions = {{"a", State::kUpgrading, "(from 2.28.0)"}},
       .recheck_after = m15,
       .upgrading = 1,
       .condition_status = "True",
       .condition_reason = "RollingOut",
       .condition_message = "upgrading: a"},
      {.situation = "an already tainted node goes first, and is not tainted twice",
       .policy = Policy(),
       .nodes = {{.name = "a", .labelled = kOld, .ready = kOld},
                 {.name = "b", .labelled = kOld, .ready = kOld, .tainted = true}},
       .expect_nodes = {{"a", NodeClass::kCandidate, State::kPending, "waiting for a slot"},
                        {"b", NodeClass::kCandidate, State::kUpgrading, "(from 2.28.0)"}},
       .changes = {{"b", {{kVersionLabel, kNew}}, std::nullopt}},
       .transitions = {{"b", State::kUpgrading, "labelled for driver 2.29.0"}},
       .recheck_after = m15,
       .upgrading = 1,
       .pending = 1,
       .condition_status = "True",
       .condition_reason = "RollingOut",
       .condition_message = "1 upgrading, 1 pending"},
      {.situation = "maxParallel reached: the rest wait for a slot, keeping their pending time",
       .policy = Policy(2),
       .nodes = {{.name = "a", .labelled = kNew, .tainted = true},
                 {.name = "b", .labelled = kOld, .ready = kOld},
                 {.name = "c", .labelled = kOld, .ready = kOld}},
       .previous = {Prev("a", State::kUpgrading, absl::Minutes(5)),
                    Prev("c", State::kPending, absl::Minutes(5))},
       .expect_nodes = {{"a", NodeClass::kUpgrading, State::kUpgrading,
                         "waiting for KMM to load driver 2.29.0", absl::Minutes(5),
                         absl::Minutes(10)},
                        {"b", NodeClass::kCandidate, State::kUpgrading, "(from 2.28.0)"},
                        {"c", NodeClass::kCandidate, State::kPending,
                         "waiting for a slot (maxParallel 2)", absl::Minutes(5)}},
       .changes = {{"b", {{kVersionLabel, kNew}}, kKeptAndOurs}},
       .transitions = {{"b", State::kUpgrading, "tainted"}},
       .recheck_after = absl::Minutes(10),
       .upgrading = 2,
       .pending = 1,
       .condition_status = "True",
       .condition_reason = "RollingOut",
       .condition_message = "upgrading: a, b"},
      {.situation = "paused: no node starts (not even a first install); one under way goes on",
       .policy = Policy(3, /*paused=*/true),
       .nodes = {{.name = "a", .labelled = kOld, .ready = kOld},
                 {.name = "b"},
                 {.name = "c", .labelled = kNew, .tainted = true}},
       .previous = {Prev("c", State::kUpgrading, absl::Minutes(1))},
       .expect_nodes = {{"a", NodeClass::kCandidate, State::kPending,
                         "rollout paused (spec.upgradePolicy.paused)"},
                        {"b", NodeClass::kCandidate, State::kPending, "rollout paused"},
                        {"c", NodeClass::kUpgrading, State::kUpgrading, "waiting for KMM",
                         absl::Minutes(1), absl::Minutes(14)}},
       .recheck_after = absl::Minutes(14),
       .upgrading = 1,
       .pending = 2,
       .condition_status = "True",
       .condition_reason = "Paused",
       .condition_message = "paused (0 of 3 nodes on driver 2.29.0; 1 upgrading, 2 pending, 0 "
                            "failed): set spec.upgradePolicy.paused to false to go on"},
      {.situation = "a node upgrading past nodeTimeout fails and the rollout stops",
       .policy = Policy(3),
       .nodes = {{.name = "a", .labelled = kNew, .tainted = true},
                 {.name = "b", .labelled = kOld, .ready = kOld},
                 {.name = "c", .labelled = kOld, .ready = kOld}},
       .previous = {Prev("a", State::kUpgrading, m15)},
       .expect_nodes = {{"a", NodeClass::kFailed, State::kFailed,
                         "driver 2.29.0 not ready within 15m (KMM has not set "
                         "kmm.node.kubernetes.io/ops.neuron.version.ready=2.29.0); the taint "
                         "stays so no workload lands on it"},
                        {"b", NodeClass::kCandidate, State::kPending, "rollout stopped: a failed"},
                        {"c", NodeClass::kCandidate, State::kPending, "rollout stopped: a failed"}},
       .transitions = {{"a", State::kFailed, "not ready within 15m"}},
       .pending = 2,
       .failed = 1,
       .condition_status = "True",
       .condition_reason = "NodeFailed",
       .condition_message = "stopped: a failed (0 of 3 nodes on driver 2.29.0; 0 upgrading, 2 "
                            "pending, 1 failed)",
       .degraded = "driver upgrade stopped at a: driver 2.29.0 not ready within 15m"},
      {.situation = "a failed node stays failed with its original time, and no new Event",
       .policy = Policy(),
       .nodes = {{.name = "a", .labelled = kNew}},
       .previous = {Prev("a", State::kFailed, absl::Hours(2))},
       .expect_nodes = {{"a", NodeClass::kFailed, State::kFailed, "not ready within 15m",
                         absl::Hours(2)}},
       .failed = 1,
       .condition_status = "True",
       .condition_reason = "NodeFailed",
       .condition_message = "stopped: a failed",
       .degraded = "driver upgrade stopped at a: "},
      {.situation = "KMM reports the version ready: done, and the taint comes off",
       .policy = Policy(),
       .nodes = {{.name = "a", .labelled = kNew, .ready = kNew, .tainted = true}},
       .previous = {Prev("a", State::kUpgrading, absl::Minutes(3))},
       .expect_nodes = {{"a", NodeClass::kDone, State::kDone, ""}},
       .changes = {{"a", {}, kKept}},
       .transitions = {{"a", State::kDone, "driver 2.29.0 is ready; taint removed"}},
       .done = 1,
       .condition_status = "False",
       .condition_reason = "UpToDate",
       .condition_message = "every matching node (1) runs driver 2.29.0"},
      {.situation = "a done node without a previous entry is no news; a done one keeps its time",
       .policy = Policy(),
       .nodes = {{.name = "a", .labelled = kNew, .ready = kNew},
                 {.name = "b", .labelled = kNew, .ready = kNew}},
       .previous = {Prev("b", State::kDone, absl::Hours(1))},
       .expect_nodes = {{"a", NodeClass::kDone, State::kDone, ""},
                        {"b", NodeClass::kDone, State::kDone, "", absl::Hours(1)}},
       .done = 2,
       .condition_status = "False",
       .condition_reason = "UpToDate",
       .condition_message = "every matching node (2) runs driver 2.29.0"},
      {.situation = "an entry about another version is not this rollout's: the timer starts now",
       .policy = Policy(),
       .nodes = {{.name = "a", .labelled = kNew, .tainted = true}},
       .previous = {Prev("a", State::kFailed, absl::Hours(1), kOld)},
       .expect_nodes =
           {{"a", NodeClass::kUpgrading, State::kUpgrading, "waiting for KMM", {}, m15}},
       .recheck_after = m15,
       .upgrading = 1,
       .condition_status = "True",
       .condition_reason = "RollingOut",
       .condition_message = "upgrading: a"},
      {.situation = "recheck_after is the earliest deadline of the upgrading nodes",
       .policy = Policy(4),
       .nodes = {{.name = "a", .labelled = kNew, .tainted = true},
                 {.name = "b", .labelled = kNew, .tainted = true},
                 {.name = "c", .labelled = kOld, .ready = kOld},
                 {.name = "d"}},
       .previous = {Prev("a", State::kUpgrading, absl::Minutes(2)),
                    Prev("b", State::kUpgrading, absl::Minutes(11))},
       .expect_nodes =
           {{"a", NodeClass::kUpgrading, State::kUpgrading, "waiting for KMM", absl::Minutes(2),
             absl::Minutes(13)},
            {"b", NodeClass::kUpgrading, State::kUpgrading, "waiting for KMM", absl::Minutes(11),
             absl::Minutes(4)},
            {"c", NodeClass::kCandidate, State::kUpgrading, "tainted"},
            {"d", NodeClass::kFirstInstall, State::kUpgrading, "first install", {}, m15}},
       // First-install changes come with the classified nodes, before the admitted ones.
       .changes = {{"d", {{kVersionLabel, kNew}}, std::nullopt},
                   {"c", {{kVersionLabel, kNew}}, kKeptAndOurs}},
       .transitions = {{"d", State::kUpgrading, "first install"},
                       {"c", State::kUpgrading, "tainted"}},
       .recheck_after = absl::Minutes(4),
       .upgrading = 4,
       .condition_status = "True",
       .condition_reason = "RollingOut",
       .condition_message = "upgrading: a, b, d, c"},
      {.situation = "a node that left the selector loses our labels and taint",
       .policy = Policy(),
       .nodes = {{.name = "a", .labelled = kNew, .ready = kNew},
                 {.name = "x", .labelled = kNew, .ready = kNew, .tainted = true, .selected = false},
                 {.name = "y", .selected = false}},
       .expect_nodes = {{"a", NodeClass::kDone, State::kDone, ""}},
       .changes = {{"x", {{kVersionLabel, std::nullopt}, {kReadyLabel, std::nullopt}}, kKept}},
       .done = 1,
       .condition_status = "False",
       .condition_reason = "UpToDate",
       .condition_message = "every matching node (1) runs driver 2.29.0"},
  };
}

void CheckClassify(const Row& row, const std::vector<json>& nodes) {
  const upgrade_steps::Target target = upgrade_steps::TargetOf(Dc(row.policy));
  CHECK(target.version_label == kVersionLabel);
  CHECK(target.ready_label == kReadyLabel);
  for (const NodeExpect& want : row.expect_nodes) {
    CAPTURE(want.name);
    const json* node = nullptr;
    for (const json& n : nodes) {
      if (n["metadata"]["name"] == want.name) node = &n;
    }
    REQUIRE(node != nullptr);
    const NodeUpgrade* prev = nullptr;
    for (const NodeUpgrade& p : row.previous) {
      if (p.node == want.name && p.version == kNew) prev = &p;
    }
    const upgrade_steps::NodeStep s =
        upgrade_steps::Classify(*node, prev, target, row.policy, kNow);
    CHECK(upgrade_steps::ClassName(s.cls) == std::string(upgrade_steps::ClassName(want.cls)));
    if (want.cls == NodeClass::kCandidate) {
      CHECK(s.entry.state == State::kPending);
      CHECK_FALSE(s.deadline.has_value());
      CHECK_FALSE(s.change.has_value());
      continue;
    }
    CHECK(s.entry.state == want.state);
    CHECK(s.entry.since == kNow - want.since_ago);
    REQUIRE(s.deadline.has_value() == want.deadline_in.has_value());
    if (want.deadline_in) CHECK(*s.deadline == kNow + *want.deadline_in);
  }
}

TEST_CASE("PlanUpgrade, one row per situation", "[operator][upgrade][unit]") {
  for (const Row& row : Table()) {
    SECTION(row.situation) {
      std::vector<json> nodes;
      for (const NodeSpec& n : row.nodes) nodes.push_back(NodeJson(n));
      CheckClassify(row, nodes);

      const UpgradePlan plan = PlanUpgrade(Dc(row.policy), nodes, row.previous, kNow);
      REQUIRE(plan.nodes.size() == row.expect_nodes.size());
      for (size_t i = 0; i < plan.nodes.size(); ++i) {
        const NodeUpgrade& got = plan.nodes[i];
        const NodeExpect& want = row.expect_nodes[i];
        CAPTURE(got.node, got.reason);
        CHECK(got.node == want.name);
        CHECK(got.version == kNew);
        CHECK(StateName(got.state) == std::string(StateName(want.state)));
        CHECK(Contains(got.reason, want.reason));
        CHECK(got.since == kNow - want.since_ago);
      }

      REQUIRE(plan.changes.size() == row.changes.size());
      for (size_t i = 0; i < plan.changes.size(); ++i) {
        const NodeChange& got = plan.changes[i];
        const ChangeExpect& want = row.changes[i];
        CAPTURE(got.Patch().dump());
        CHECK(got.node == want.node);
        CHECK(got.resource_version == "rv-" + want.node);
        CHECK(got.labels == want.labels);
        REQUIRE(got.taints.has_value() == want.taints.has_value());
        if (want.taints) CHECK(TaintKeys(*got.taints) == *want.taints);
      }

      REQUIRE(plan.transitions.size() == row.transitions.size());
      for (size_t i = 0; i < plan.transitions.size(); ++i) {
        CAPTURE(plan.transitions[i].message);
        CHECK(plan.transitions[i].node == row.transitions[i].node);
        CHECK(plan.transitions[i].to == row.transitions[i].to);
        CHECK(Contains(plan.transitions[i].message, row.transitions[i].message));
      }

      CHECK(plan.recheck_after == row.recheck_after);
      CHECK(plan.done == row.done);
      CHECK(plan.upgrading == row.upgrading);
      CHECK(plan.pending == row.pending);
      CHECK(plan.failed == row.failed);
      CAPTURE(plan.condition_message);
      CHECK(plan.condition_status == row.condition_status);
      CHECK(plan.condition_reason == row.condition_reason);
      CHECK(Contains(plan.condition_message, row.condition_message));
      REQUIRE(plan.degraded.has_value() == row.degraded.has_value());
      if (row.degraded) CHECK(Contains(*plan.degraded, *row.degraded));
    }
  }
}

TEST_CASE("past 1000 entries, done nodes are left out of status.nodes",
          "[operator][upgrade][unit]") {
  std::vector<json> nodes;
  for (int i = 0; i < 1000; ++i) {
    nodes.push_back(NodeJson({.name = absl::StrCat("done-", i), .labelled = kNew, .ready = kNew}));
  }
  nodes.push_back(NodeJson({.name = "old-0", .labelled = kOld, .ready = kOld}));
  nodes.push_back(NodeJson({.name = "old-1", .labelled = kOld, .ready = kOld}));

  UpgradePlan plan = PlanUpgrade(Dc(Policy()), nodes, {}, kNow);
  REQUIRE(plan.nodes.size() == 2);  // 1002 entries: the done ones go
  CHECK(plan.nodes[0].node == "old-0");
  CHECK(plan.nodes[0].state == State::kUpgrading);
  CHECK(plan.nodes[1].node == "old-1");
  CHECK(plan.nodes[1].state == State::kPending);
  CHECK(plan.done == 1000);  // still counted
  CHECK(plan.condition_message.find("1000 of 1002 nodes") != std::string::npos);

  nodes.pop_back();  // 1001 entries: still over
  plan = PlanUpgrade(Dc(Policy()), nodes, {}, kNow);
  REQUIRE(plan.nodes.size() == 1);
  CHECK(plan.nodes[0].node == "old-0");
  nodes.pop_back();  // exactly 1000 entries: all listed
  plan = PlanUpgrade(Dc(Policy()), nodes, {}, kNow);
  CHECK(plan.nodes.size() == 1000);
}

TEST_CASE("Admit orders the decided steps: classified first, then candidates as considered",
          "[operator][upgrade][unit]") {
  const DeviceConfig dc = Dc(Policy(2));
  const upgrade_steps::Target target = upgrade_steps::TargetOf(dc);
  const std::vector<json> nodes = {NodeJson({.name = "a", .labelled = kOld, .ready = kOld}),
                                   NodeJson({.name = "b", .labelled = kNew, .ready = kNew}),
                                   NodeJson({.name = "c", .labelled = kOld, .tainted = true}),
                                   NodeJson({.name = "d", .labelled = kOld})};
  std::vector<upgrade_steps::NodeStep> steps;
  for (const json& n : nodes) {
    steps.push_back(upgrade_steps::Classify(n, nullptr, target, dc.spec.upgrade, kNow));
  }
  steps = upgrade_steps::Admit(std::move(steps), target, dc.spec.upgrade, kNow);
  std::vector<std::string> order;
  for (const auto& s : steps) order.push_back(s.entry.node + ":" + StateName(s.entry.state));
  CHECK(order == std::vector<std::string>{"b:done", "c:upgrading", "a:upgrading", "d:pending"});
  const upgrade_steps::Summary sum = upgrade_steps::Summarize(steps, target, dc.spec.upgrade);
  CHECK(sum.done == 1);
  CHECK(sum.upgrading == 2);
  CHECK(sum.pending == 1);
  CHECK(sum.condition_message.find("upgrading: c, a") != std::string::npos);
}

}  // namespace
}  // namespace neuron::op
