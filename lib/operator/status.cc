// File: lib/operator/status.cc
#include "lib/operator/status.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/json_access.h"
#include "lib/k8s/conditions.h"

namespace neuron::op {
namespace {

using nlohmann::json;

// The workload counts are int32 in the API; anything else reads as 0.
int IntAt(const json& obj, const json::json_pointer& p) {
  const int64_t v = neuron::IntAt(obj, p);
  return v >= std::numeric_limits<int>::min() && v <= std::numeric_limits<int>::max()
             ? static_cast<int>(v)
             : 0;
}

bool Present(const json& obj) { return obj.is_object() && !obj.empty(); }

std::string SelectorText(const DeviceConfig& dc) {
  if (dc.spec.selector.empty()) return "{} (every node)";
  std::vector<std::string> kv;
  for (const auto& [k, v] : dc.spec.selector) kv.push_back(absl::StrCat(k, "=", v));
  return absl::StrCat("{", absl::StrJoin(kv, ","), "}");
}

k8s::Condition Cond(const std::string& type, bool ok, std::string reason, std::string message) {
  k8s::Condition c;
  c.type = type;
  c.status = ok ? "True" : "False";
  c.reason = std::move(reason);
  c.message = std::move(message);
  return c;
}

// One component's condition from its counts. `what` names the workload in messages.
k8s::Condition FromCounts(const std::string& type, const std::string& what, const Counts& n,
                          bool per_node, const DeviceConfig& dc) {
  if (per_node && n.matching == 0) {
    return Cond(type, false, "NoMatchingNodes",
                absl::StrCat("no node matches spec.selector ", SelectorText(dc),
                             ": label the Neuron nodes, install NFD, or change the selector"));
  }
  if (!n.current) {
    return Cond(type, false, "Progressing",
                absl::StrCat(what, " has not yet observed the latest spec"));
  }
  const char* unit = per_node ? " nodes" : " replicas";
  if (n.desired == 0) {
    return Cond(type, false, "NotScheduled",
                per_node ? absl::StrCat(what, " is desired on none of the ", n.matching,
                                        " matching nodes: check taints and node readiness")
                         : absl::StrCat(what, " has no replicas"));
  }
  if (n.available < n.desired) {
    return Cond(type, false, "Progressing",
                absl::StrCat(what, ": ", n.available, " of ", n.desired, unit,
                             " available; see its pods' events if this persists"));
  }
  return Cond(type, true, "Available",
              absl::StrCat(what, ": ", n.available, " of ", n.desired, unit, " available"));
}

json CountsJson(const Counts& n) {
  return {{"nodesMatchingSelectorNumber", n.matching},
          {"desiredNumber", n.desired},
          {"availableNumber", n.available}};
}

std::string Summary(const Counts& n) { return absl::StrCat(n.available, "/", n.desired); }

// Only a spec'd kube-scheduler can be newer than the API server (the default follows it). An
// image whose tag is no version ("latest") and an unknown server version say nothing.
std::optional<k8s::Condition> SchedulerSkew(const DeviceConfig& dc, const ObservedState& seen) {
  if (seen.blocker || !dc.RunsDevicePlugin() || !seen.apis.server_version) return std::nullopt;
  const KubeVersion& api = *seen.apis.server_version;
  const std::optional<KubeVersion> image = ImageTagVersion(dc.spec.custom_scheduler_image);
  if (!image || !SchedulerNewerThanApiServer(*image, api)) return std::nullopt;
  return Cond(kSchedulerSkewCondition, true, "SchedulerNewerThanAPIServer",
              absl::StrCat("spec.customSchedulerImage runs kube-scheduler ", image->ToString(),
                           ", newer than the API server's ", api.ToString(),
                           ": the Kubernetes version skew policy allows no kube-scheduler newer "
                           "than kube-apiserver; use a v",
                           api.major, ".", api.minor,
                           " kube-scheduler, or (in v1beta1) unset customSchedulerImage to run ",
                           KubeSchedulerImage(api)));
}

// One side of mixed allocation: the nodes labelled for DRA, or the others. A side with no
// node is no fault (every node may use one API).
k8s::Condition MixedSide(const char* type, const std::string& what, const Counts& n,
                         const DeviceConfig& dc, const char* none) {
  if (n.matching == 0 && n.current) return Cond(type, true, "NoNodes", none);
  return FromCounts(type, what, n, true, dc);
}

// DevicePluginReady: whatever advertises the devices. Where no device plugin runs (AWS's DRA
// driver, allocation dra) the DRA driver plays its part, as in the seed's DRA mode; in mixed
// allocation and driverMode preinstalled our DaemonSet; else the KMM Module's plugin.
k8s::Condition PluginCondition(const DeviceConfig& dc, const ObservedState& seen, Counts& plugin) {
  constexpr char kType[] = "DevicePluginReady";
  if (!dc.RunsDevicePlugin()) {
    plugin = DaemonSetCounts(seen.dra_ds, seen.nodes_matching);
    return FromCounts(kType, "DRA driver", plugin, true, dc);
  }
  if (dc.spec.allocation == Allocation::kMixed) {
    plugin = DaemonSetCounts(seen.plugin_ds, seen.nodes_matching - seen.dra_nodes);
    return MixedSide(kType, "device plugin", plugin, dc,
                     "every matching node is labelled for DRA: no device plugin runs");
  }
  if (dc.spec.driver_mode == DriverMode::kPreinstalled) {
    plugin = DaemonSetCounts(seen.plugin_ds, seen.nodes_matching);
    return FromCounts(kType, "device plugin", plugin, true, dc);
  }
  if (!seen.apis.kmm) {
    return Cond(kType, false, "KMMNotInstalled",
                "the device plugin runs from the KMM Module: install KMM, or set "
                "driverMode: preinstalled");
  }
  plugin = KmmCounts(seen.module, "devicePlugin");
  return FromCounts(kType, "device plugin (KMM)", plugin, true, dc);
}

// DRADriverReady, in DRA modes: the DRA DaemonSet on every matching node, or in mixed
// allocation on those labelled for DRA.
k8s::Condition DraCondition(const DeviceConfig& dc, const ObservedState& seen, Counts& dra) {
  if (dc.spec.allocation != Allocation::kMixed || dc.AwsDra()) {
    dra = DaemonSetCounts(seen.dra_ds, seen.nodes_matching);
    return FromCounts(kDraDriverCondition, "DRA driver", dra, true, dc);
  }
  dra = DaemonSetCounts(seen.dra_ds, seen.dra_nodes);
  return MixedSide(kDraDriverCondition, "DRA driver", dra, dc,
                   "no matching node is labelled neuron.aws.com/allocation=dra: the device "
                   "plugin serves them all");
}

}  // namespace

Counts DaemonSetCounts(const json& ds, int nodes_matching) {
  Counts n;
  n.matching = nodes_matching;
  n.desired = IntAt(ds, "/status/desiredNumberScheduled"_json_pointer);
  // Only pods of the current template count as available: an old plugin is not "ready".
  n.available = std::min(IntAt(ds, "/status/numberAvailable"_json_pointer),
                         IntAt(ds, "/status/updatedNumberScheduled"_json_pointer));
  n.current = IntAt(ds, "/status/observedGeneration"_json_pointer) >=
              IntAt(ds, "/metadata/generation"_json_pointer);
  return n;
}

Counts DeploymentCounts(const json& deploy) {
  Counts n;
  n.desired = Present(deploy) && deploy.contains("/spec/replicas"_json_pointer)
                  ? IntAt(deploy, "/spec/replicas"_json_pointer)
                  : 1;  // the API server's default
  n.matching = n.desired;
  n.available = std::min(IntAt(deploy, "/status/availableReplicas"_json_pointer),
                         IntAt(deploy, "/status/updatedReplicas"_json_pointer));
  n.current = IntAt(deploy, "/status/observedGeneration"_json_pointer) >=
              IntAt(deploy, "/metadata/generation"_json_pointer);
  return n;
}

Counts KmmCounts(const json& module, const char* section) {
  const json::json_pointer base = json::json_pointer("/status") / section;
  Counts n;
  n.matching = IntAt(module, base / "nodesMatchingSelectorNumber");
  n.desired = IntAt(module, base / "desiredNumber");
  n.available = IntAt(module, base / "availableNumber");
  return n;  // KMM reports no observedGeneration per section
}

namespace {

// The component counts status reports, filled as the conditions are worked out.
struct ComponentCounts {
  Counts driver, plugin, sched, metrics, dra;
};

// Nothing was applied: every component's state is unknown, and says why.
void BlockedConditions(const DeviceConfig& dc, const Blocker& blocker,
                       std::vector<k8s::Condition>& set) {
  std::vector<const char*> types = {"DriverReady", "DevicePluginReady", "SchedulerReady",
                                    "MetricsReady"};
  if (dc.DraMode()) types.push_back(kDraDriverCondition);
  for (const char* type : types) {
    k8s::Condition c =
        Cond(type, false, "NotApplied", absl::StrCat("nothing was applied: ", blocker.message));
    c.status = "Unknown";
    set.push_back(c);
  }
}

// Driver (and in kmm mode the plugin) come from the Module KMM reports on.
k8s::Condition DriverCondition(const DeviceConfig& dc, const ObservedState& seen, Counts& driver) {
  if (dc.spec.driver_mode != DriverMode::kKmm) {
    driver = {seen.nodes_matching, seen.nodes_matching, seen.nodes_matching, true};
    if (dc.Emulated()) {
      return Cond("DriverReady", true, "Emulated", "spec.emulation: no driver is installed");
    }
    return Cond("DriverReady", true, "Preinstalled",
                "driverMode is preinstalled: the node image provides the driver");
  }
  if (!seen.apis.kmm) {
    return Cond("DriverReady", false, "KMMNotInstalled",
                "KMM is not installed (kmm.sigs.x-k8s.io/v1beta1 Module is not served): "
                "install it, or set driverMode: preinstalled");
  }
  driver = KmmCounts(seen.module, "moduleLoader");
  return FromCounts("DriverReady", "driver (KMM module loader)", driver, true, dc);
}

k8s::Condition SchedulerCondition(const DeviceConfig& dc, const ObservedState& seen,
                                  Counts& sched) {
  if (!dc.RunsDevicePlugin()) {
    return Cond("SchedulerReady", true, "NotNeeded",
                "DRA mode: kube-scheduler's own DRA support places the pods");
  }
  // One Deployment: each replica's pod runs kube-scheduler and the extender it calls.
  sched = DeploymentCounts(seen.scheduler);
  return FromCounts("SchedulerReady", "custom kube-scheduler with its extender", sched, false, dc);
}

k8s::Condition MetricsCondition(const DeviceConfig& dc, const ObservedState& seen,
                                Counts& metrics) {
  metrics = DaemonSetCounts(seen.metrics_ds, seen.nodes_matching);
  k8s::Condition mc = FromCounts("MetricsReady", "node agent", metrics, true, dc);
  if (!seen.apis.service_monitor) {
    absl::StrAppend(&mc.message, " (no ServiceMonitor: monitoring.coreos.com is not served)");
  }
  return mc;
}

void ComponentConditions(const DeviceConfig& dc, const ObservedState& seen, ComponentCounts& n,
                         std::vector<k8s::Condition>& set) {
  set.push_back(DriverCondition(dc, seen, n.driver));
  set.push_back(PluginCondition(dc, seen, n.plugin));
  if (dc.DraMode()) set.push_back(DraCondition(dc, seen, n.dra));
  set.push_back(SchedulerCondition(dc, seen, n.sched));
  set.push_back(MetricsCondition(dc, seen, n.metrics));
}

// Upgrading is news, not readiness: it takes no part in Ready. Without a rollout it says why
// none runs; nullopt while blocked (nothing is known).
std::optional<k8s::Condition> UpgradingCondition(const DeviceConfig& dc,
                                                 const ObservedState& seen) {
  if (seen.upgrade) {
    k8s::Condition c =
        Cond("Upgrading", false, seen.upgrade->condition_reason, seen.upgrade->condition_message);
    c.status = seen.upgrade->condition_status;
    return c;
  }
  if (seen.blocker) return std::nullopt;
  if (dc.Emulated()) {
    return Cond("Upgrading", false, "Emulated", "spec.emulation: there is no driver to upgrade");
  }
  if (dc.spec.driver_mode != DriverMode::kKmm) {
    return Cond("Upgrading", false, "Preinstalled",
                "driverMode is preinstalled: the node image's driver is used");
  }
  if (!seen.apis.kmm) {
    return Cond("Upgrading", false, "KMMNotInstalled",
                "driver versions roll through KMM, which is not installed");
  }
  return Cond("Upgrading", false, "NotVersioned",
              "spec.driverVersion is not set: KMM loads the driver on every matching node; "
              "set it to roll versions node by node");
}

// Degraded and Ready from everything else in `set` (called last).
void ReadyAndDegraded(const ObservedState& seen, std::vector<k8s::Condition>& set) {
  if (const std::optional<Blocker>& stop = seen.blocker ? seen.blocker : seen.failure) {
    set.push_back(Cond("Degraded", true, stop->reason, stop->message));
    set.push_back(Cond("Ready", false, stop->reason, stop->message));
    return;
  }
  std::vector<std::string> warnings = seen.warnings;
  const bool upgrade_failed = seen.upgrade && seen.upgrade->degraded;
  if (upgrade_failed) warnings.insert(warnings.begin(), *seen.upgrade->degraded);
  set.push_back(warnings.empty()
                    ? Cond("Degraded", false, "AsExpected", "")
                    : Cond("Degraded", true,
                           upgrade_failed ? "DriverUpgradeFailed" : "OptionalApiMissing",
                           absl::StrJoin(warnings, "; ")));
  std::vector<std::string> waiting;
  for (const k8s::Condition& c : set) {
    if (c.type != "Degraded" && c.type != "Upgrading" && c.status != "True") {
      waiting.push_back(c.type);
    }
  }
  set.push_back(waiting.empty() ? Cond("Ready", true, "AllComponentsReady",
                                       "driver, device plugin, scheduler and metrics are available")
                                : Cond("Ready", false, "ComponentsNotReady",
                                       absl::StrCat("waiting for ", absl::StrJoin(waiting, ", "))));
}

// The counts, summaries (printer columns) and the rollout's fields.
void WriteCounts(const DeviceConfig& dc, const ObservedState& seen, const ComponentCounts& n,
                 json& status) {
  status["driver"] = CountsJson(n.driver);
  status["devicePlugin"] = CountsJson(n.plugin);
  status["scheduler"] = CountsJson(n.sched);
  status["metrics"] = CountsJson(n.metrics);
  status["driverSummary"] = Summary(n.driver);
  status["devicePluginSummary"] = Summary(n.plugin);
  status["schedulerSummary"] = dc.RunsDevicePlugin() ? Summary(n.sched) : std::string("DRA");
  if (dc.DraMode()) {
    status["draDriver"] = CountsJson(n.dra);
    status["draDriverSummary"] = Summary(n.dra);
  } else {
    status.erase("draDriver");
    status.erase("draDriverSummary");
  }
  if (const std::optional<UpgradePlan>& u = seen.upgrade) {
    json nodes = json::array();
    for (const NodeUpgrade& node : u->nodes) nodes.push_back(ToJson(node));
    status["nodes"] = std::move(nodes);
    status["upgrade"] = {{"driverVersion", dc.spec.driver_version},
                         {"nodesDone", u->done},
                         {"nodesUpgrading", u->upgrading},
                         {"nodesPending", u->pending},
                         {"nodesFailed", u->failed},
                         {"nodesDraining", u->draining}};
    if (!u->retry_handled.empty()) status["upgrade"]["retryHandled"] = u->retry_handled;
  } else if (!seen.blocker) {
    status.erase("nodes");
    status.erase("upgrade");
  }
}

}  // namespace

json ComputeStatus(const DeviceConfig& dc, const ObservedState& seen, const json& old_status,
                   absl::Time now) {
  json status = old_status.is_object() ? old_status : json::object();
  json conditions = status.value("conditions", json::array());
  if (!conditions.is_array()) conditions = json::array();

  std::vector<k8s::Condition> set;
  ComponentCounts counts;
  if (seen.blocker) {
    BlockedConditions(dc, *seen.blocker, set);
  } else {
    ComponentConditions(dc, seen, counts, set);
  }
  if (std::optional<k8s::Condition> upgrading = UpgradingCondition(dc, seen)) {
    set.push_back(*upgrading);
  }
  ReadyAndDegraded(seen, set);
  // Only DRA modes run a DRA driver: the condition goes with the mode.
  if (!dc.DraMode()) k8s::RemoveCondition(conditions, kDraDriverCondition);
  // Says so as long as spec.emulation is set: pods get emulated devices, not silicon.
  if (dc.Emulated()) {
    set.push_back(Cond(kEmulatedCondition, true, "EmulationConfigured",
                       absl::StrCat("devices are emulated as ", dc.spec.emulation->instance_type,
                                    " on the selected nodes without Neuron hardware: pods are "
                                    "placed and run, but no Neuron silicon backs them")));
  } else {
    k8s::RemoveCondition(conditions, kEmulatedCondition);
  }
  // News like Upgrading, not readiness: present only while the skew lasts.
  if (std::optional<k8s::Condition> skew = SchedulerSkew(dc, seen)) {
    set.push_back(*skew);
  } else {
    k8s::RemoveCondition(conditions, kSchedulerSkewCondition);
  }
  for (k8s::Condition& c : set) {
    c.observed_generation = dc.generation;
    (void)k8s::SetCondition(conditions, std::move(c), now);
  }
  status["observedGeneration"] = dc.generation;
  status["conditions"] = std::move(conditions);
  WriteCounts(dc, seen, counts, status);
  if (seen.ultra_servers.is_null()) {
    status.erase("ultraServers");
  } else {
    status["ultraServers"] = seen.ultra_servers;
  }
  return status;
}

}  // namespace neuron::op
