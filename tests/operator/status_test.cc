// ComputeStatus directly, one row per situation: what each condition says, which one decides
// Ready, and what status keeps from the previous pass.
#include "lib/operator/status.h"

#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace neuron::op {
namespace {

using nlohmann::json;

const absl::Time kStatusNow = absl::FromUnixSeconds(1'800'000'000);

json AvailableDaemonSet(int n) {
  return {{"metadata", {{"generation", 2}}},
          {"status",
           {{"observedGeneration", 2},
            {"desiredNumberScheduled", n},
            {"numberAvailable", n},
            {"updatedNumberScheduled", n}}}};
}

json AvailableDeployment(int replicas) {
  return {{"metadata", {{"generation", 1}}},
          {"spec", {{"replicas", replicas}}},
          {"status",
           {{"observedGeneration", 1},
            {"availableReplicas", replicas},
            {"updatedReplicas", replicas}}}};
}

DeviceConfig Preinstalled() {
  DeviceConfig dc;
  dc.ns = "ops";
  dc.name = "neuron";
  dc.generation = 7;
  dc.spec.driver_mode = DriverMode::kPreinstalled;
  return dc;
}

// Every component of a preinstalled device-plugin install available on 3 nodes.
ObservedState AllAvailable() {
  ObservedState seen;
  seen.apis.kmm = true;
  seen.apis.service_monitor = true;
  seen.nodes_matching = 3;
  seen.plugin_ds = AvailableDaemonSet(3);
  seen.metrics_ds = AvailableDaemonSet(3);
  seen.scheduler = AvailableDeployment(2);
  return seen;
}

std::map<std::string, std::string> Conditions(const json& status) {
  std::map<std::string, std::string> out;  // type -> "status/reason"
  for (const json& c : status["conditions"]) {
    out[c["type"].get<std::string>()] =
        c["status"].get<std::string>() + "/" + c["reason"].get<std::string>();
  }
  return out;
}

std::string MessageOf(const json& status, const std::string& type) {
  for (const json& c : status["conditions"]) {
    if (c["type"] == type) return c.value("message", "");
  }
  return "";
}

struct StatusRow {
  const char* name;
  std::function<void(DeviceConfig&, ObservedState&)> change;
  std::map<std::string, std::string> want;  // the conditions that must read so
};

TEST_CASE("ComputeStatus: one row per situation", "[operator][status]") {
  const std::vector<StatusRow> rows = {
      {"everything available",
       [](DeviceConfig&, ObservedState&) {},
       {{"Ready", "True/AllComponentsReady"},
        {"Degraded", "False/AsExpected"},
        {"DriverReady", "True/Preinstalled"},
        {"DevicePluginReady", "True/Available"},
        {"SchedulerReady", "True/Available"},
        {"MetricsReady", "True/Available"},
        {"Upgrading", "False/Preinstalled"}}},
      {"an invalid spec blocks: components unknown",
       [](DeviceConfig&, ObservedState& s) {
         s.blocker = Blocker{"InvalidSpec", "spec.x: bad"};
       },
       {{"Ready", "False/InvalidSpec"},
        {"Degraded", "True/InvalidSpec"},
        {"DriverReady", "Unknown/NotApplied"},
        {"MetricsReady", "Unknown/NotApplied"}}},
      {"an API error part way: Degraded, components as seen",
       [](DeviceConfig&, ObservedState& s) {
         s.failure = Blocker{"ApplyFailed", "apply: 500"};
       },
       {{"Ready", "False/ApplyFailed"},
        {"Degraded", "True/ApplyFailed"},
        {"DevicePluginReady", "True/Available"}}},
      {"kmm mode without KMM",
       [](DeviceConfig& dc, ObservedState& s) {
         dc.spec.driver_mode = DriverMode::kKmm;
         s.apis.kmm = false;
       },
       {{"Ready", "False/ComponentsNotReady"},
        {"DriverReady", "False/KMMNotInstalled"},
        {"DevicePluginReady", "False/KMMNotInstalled"},
        {"Upgrading", "False/KMMNotInstalled"}}},
      {"the node agent still rolling out",
       [](DeviceConfig&, ObservedState& s) { s.metrics_ds["status"]["numberAvailable"] = 1; },
       {{"Ready", "False/ComponentsNotReady"}, {"MetricsReady", "False/Progressing"}}},
      {"no node matches the selector",
       [](DeviceConfig&, ObservedState& s) { s.nodes_matching = 0; },
       {{"DevicePluginReady", "False/NoMatchingNodes"}, {"Ready", "False/ComponentsNotReady"}}},
      {"a missing optional API is a warning, not unreadiness",
       [](DeviceConfig&, ObservedState& s) { s.warnings = {"NFD is not installed"}; },
       {{"Ready", "True/AllComponentsReady"}, {"Degraded", "True/OptionalApiMissing"}}},
      {"one of the two scheduler replicas (kube-scheduler + extender) not yet available",
       [](DeviceConfig&, ObservedState& s) { s.scheduler["status"]["availableReplicas"] = 1; },
       {{"SchedulerReady", "False/Progressing"}}},
  };
  for (const StatusRow& row : rows) {
    DYNAMIC_SECTION(row.name) {
      DeviceConfig dc = Preinstalled();
      ObservedState seen = AllAvailable();
      row.change(dc, seen);
      const json status = ComputeStatus(dc, seen, json::object(), kStatusNow);
      const auto got = Conditions(status);
      for (const auto& [type, want] : row.want) {
        INFO(type);
        REQUIRE(got.count(type) == 1);
        CHECK(got.at(type) == want);
      }
      CHECK(status["observedGeneration"] == 7);
      for (const json& c : status["conditions"]) CHECK(c["observedGeneration"] == 7);
    }
  }
}

TEST_CASE("ComputeStatus: Ready names what it waits for", "[operator][status]") {
  ObservedState seen = AllAvailable();
  seen.metrics_ds = json();
  seen.plugin_ds["status"]["numberAvailable"] = 0;
  const json status = ComputeStatus(Preinstalled(), seen, json::object(), kStatusNow);
  CHECK(MessageOf(status, "Ready") == "waiting for DevicePluginReady, MetricsReady");
  CHECK(status["devicePluginSummary"] == "0/3");
  CHECK(status["schedulerSummary"] == "2/2");
  CHECK(MessageOf(status, "SchedulerReady") ==
        "custom kube-scheduler with its extender: 2 of 2 replicas available");
}

TEST_CASE("ComputeStatus: a failed upgrade leads the Degraded message", "[operator][status]") {
  DeviceConfig dc = Preinstalled();
  dc.spec.driver_mode = DriverMode::kKmm;
  dc.spec.driver_version = "2.24.7.0";
  ObservedState seen = AllAvailable();
  seen.module = {
      {"status",
       {{"moduleLoader",
         {{"nodesMatchingSelectorNumber", 3}, {"desiredNumber", 3}, {"availableNumber", 3}}},
        {"devicePlugin",
         {{"nodesMatchingSelectorNumber", 3}, {"desiredNumber", 3}, {"availableNumber", 3}}}}}};
  seen.warnings = {"NFD is not installed"};
  UpgradePlan plan;
  plan.failed = 1;
  plan.done = 2;
  plan.condition_status = "True";
  plan.condition_reason = "NodeFailed";
  plan.condition_message = "stopped";
  plan.degraded = "driver upgrade stopped at trn-a: not ready";
  plan.nodes = {{"trn-a", "2.24.7.0", NodeUpgradeState::kFailed, kStatusNow, "not ready"}};
  seen.upgrade = plan;
  const json status = ComputeStatus(dc, seen, json::object(), kStatusNow);
  CHECK(Conditions(status)["Degraded"] == "True/DriverUpgradeFailed");
  CHECK(MessageOf(status, "Degraded") ==
        "driver upgrade stopped at trn-a: not ready; NFD is not installed");
  CHECK(Conditions(status)["Upgrading"] == "True/NodeFailed");
  CHECK(Conditions(status)["Ready"] == "True/AllComponentsReady");  // Upgrading is news only
  CHECK(status["upgrade"]["nodesFailed"] == 1);
  CHECK(status["nodes"].size() == 1);
  CHECK(status["nodes"][0]["name"] == "trn-a");
  CHECK(status["nodes"][0]["state"] == "failed");
}

TEST_CASE("ComputeStatus: what the previous status keeps and loses", "[operator][status]") {
  DeviceConfig dc = Preinstalled();
  const json first = ComputeStatus(dc, AllAvailable(), json::object(), kStatusNow);
  json old = first;
  old["upgrade"] = {{"driverVersion", "old"}};
  old["nodes"] = json::array({{{"node", "trn-a"}}});
  old["conditions"].push_back({{"type", "DRADriverReady"},
                               {"status", "True"},
                               {"reason", "Available"},
                               {"lastTransitionTime", "2020-01-01T00:00:00Z"}});
  const json again = ComputeStatus(dc, AllAvailable(), old, kStatusNow + absl::Hours(1));
  // Unchanged conditions keep their transition time; mode-bound ones and the rollout go.
  CHECK(again["conditions"] == first["conditions"]);
  CHECK_FALSE(again.contains("upgrade"));
  CHECK_FALSE(again.contains("nodes"));
  // While blocked, the last rollout stays visible.
  ObservedState blocked = AllAvailable();
  blocked.blocker = Blocker{"InvalidSpec", "bad"};
  const json kept = ComputeStatus(dc, blocked, old, kStatusNow);
  CHECK(kept["nodes"] == old["nodes"]);
}

}  // namespace
}  // namespace neuron::op
