// File: lib/operator/status.h
// DeviceConfig status from what the reconcile pass saw: conditions a person can act on
// (Ready, DriverReady, DevicePluginReady, SchedulerReady, MetricsReady, Upgrading, Degraded;
// DRADriverReady in DRA modes;
// SchedulerVersionSkew while spec.customSchedulerImage is newer than the API server),
// per-node driver upgrade state, per
// component node counts as upstream names them, and the short "available/desired" strings the
// printer columns show. Pure: the reconciler gathers the inputs and writes the result.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "lib/operator/children.h"
#include "lib/operator/device_config.h"
#include "lib/operator/upgrade.h"
#include "nlohmann/json.hpp"

namespace neuron::op {

// True (reason SchedulerNewerThanAPIServer) while the spec's kube-scheduler image has a newer
// minor version than the API server; absent otherwise.
inline constexpr char kSchedulerSkewCondition[] = "SchedulerVersionSkew";

// True when the DRA driver DaemonSet (AWS's or ours) is available on its nodes; present only
// in DRA modes (draDriverImage, allocation dra or mixed).
inline constexpr char kDraDriverCondition[] = "DRADriverReady";

// True (reason EmulationConfigured) while spec.emulation is set; absent otherwise.
inline constexpr char kEmulatedCondition[] = "Emulated";

// Why nothing (or not everything) was applied: at most one blocking problem per pass.
struct Blocker {
  std::string reason;   // condition reason, e.g. "InvalidSpec", "SelectorOverlap"
  std::string message;  // what to do about it
};

struct ObservedState {
  ClusterApis apis;
  std::optional<Blocker> blocker;     // set: no child was applied this pass
  std::optional<Blocker> failure;     // set: an API error ended the pass part way
  std::vector<std::string> warnings;  // non-blocking (an optional API missing, ...)
  int nodes_matching = 0;             // Nodes matching spec.selector
  int dra_nodes = 0;                  // of those, labelled kDraNodeLabel=kDraNodeValue
  // The live children as returned by the apply (null when absent / not applied).
  nlohmann::json module;      // KMM Module (driver + device plugin in kmm mode)
  nlohmann::json plugin_ds;   // preinstalled mode, mixed allocation: the device-plugin DaemonSet
  nlohmann::json scheduler;   // Deployment <name>-custom-scheduler (with the extender in its pod)
  nlohmann::json dra_ds;      // DRA modes: DaemonSet <name>-dra-driver (AWS's or ours)
  nlohmann::json metrics_ds;  // DaemonSet <name>-node-metrics (the node agent)
  // status.ultraServers from the selected Nodes' labels (ultraservers.h); null: none seen.
  nlohmann::json ultra_servers;
  // The driver rollout this pass (kmm mode with a driverVersion); unset otherwise.
  std::optional<UpgradePlan> upgrade;
};

// The new .status, built on `old_status` (whose conditions keep their transition times when
// their status does not change).
nlohmann::json ComputeStatus(const DeviceConfig& dc, const ObservedState& seen,
                             const nlohmann::json& old_status, absl::Time now);

// {nodesMatchingSelectorNumber, desiredNumber, availableNumber} of a DaemonSet, a Deployment
// (replicas) or a KMM status section, counting only what runs the current generation.
struct Counts {
  int matching = 0;
  int desired = 0;
  int available = 0;
  bool current = true;  // the controller has observed the latest spec
};
Counts DaemonSetCounts(const nlohmann::json& ds, int nodes_matching);
Counts DeploymentCounts(const nlohmann::json& deploy);
Counts KmmCounts(const nlohmann::json& module, const char* section);  // "moduleLoader", ...

}  // namespace neuron::op
