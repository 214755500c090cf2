// File: lib/operator/reconciler.h
// One level-based pass over one DeviceConfig: read it, re-derive the whole desired state
// (children.h), apply every child with server-side apply under one field manager, delete the
// children it no longer wants, and write status (status.h). A deleting DeviceConfig has its
// children removed in DeletionOrder(), each stage gone before the next starts, and only then
// loses its finalizer. Any event may run a pass; passes are idempotent.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/base/clock.h"
#include "lib/k8s/discovery.h"
#include "lib/k8s/events.h"
#include "lib/k8s/rest_client.h"
#include "lib/operator/cached_reader.h"
#include "lib/operator/children.h"
#include "lib/operator/kube_version.h"
#include "lib/operator/status.h"
#include "lib/operator/upgrade.h"
#include "nlohmann/json.hpp"

namespace neuron::op {

// The DeviceConfig resource at the version the operator reads and writes (the stored one).
k8s::ResourceRef DeviceConfigRef();

// Every Node, at least metadata.{name,uid,resourceVersion,labels} and spec.taints (the
// controller passes its cache; tests may list).
using NodesFn = std::function<absl::StatusOr<std::vector<nlohmann::json>>()>;

// "<namespace>/<name>": how logs and events name a DeviceConfig.
std::string DeviceConfigKey(const DeviceConfig& dc);

struct ReconcileResult {
  // Run another pass after this long even without an event (deletion waiting for children,
  // an upgrading node's deadline).
  std::optional<absl::Duration> requeue_after;
  // Where the driver rollout stands, when the operator manages driver versions.
  std::optional<UpgradeProgress> upgrade;
};

class Reconciler {
 public:
  Reconciler(k8s::RestClient& client, OperatorSettings settings, NodesFn nodes,
             k8s::EventRecorder* events = nullptr, Clock* clock = nullptr);

  // Reads from the controller's caches where they hold the kind (nullptr: every read goes to
  // the API server). Set before the first pass; `reader` must outlive the reconciler.
  void SetReader(const CachedReader* reader) { reader_ = reader; }
  // Discovery is re-read when older than this (zero: on every pass) and after the server
  // answered 404 for a kind discovery said it serves.
  void SetDiscoveryMaxAge(absl::Duration age) { discovery_max_age_ = age; }

  // ns/name of a DeviceConfig. An error means "retry with backoff" (the queue decides when).
  absl::StatusOr<ReconcileResult> Reconcile(const std::string& ns, const std::string& name);

  // Which optional APIs are served (discovery as old as SetDiscoveryMaxAge allows: a CRD
  // installed later is picked up once it expires), and the API server's version
  // (ServerVersion()).
  absl::StatusOr<ClusterApis> DiscoverApis();

  // How long the API server's version is taken as known: it changes only with a control-plane
  // upgrade, so /version is asked at most this often (the controller's resync period), not
  // on every pass.
  static constexpr absl::Duration kServerVersionMaxAge = absl::Minutes(10);

 private:
  absl::StatusOr<ReconcileResult> Finalize(const DeviceConfig& dc);
  // The children, their pruning and the driver rollout; `seen` and `result` take what it saw.
  absl::Status Act(const DeviceConfig& dc, const nlohmann::json& obj,
                   const std::vector<nlohmann::json>& nodes, ObservedState& seen,
                   ReconcileResult& result);
  absl::Status EnsureFinalizer(const nlohmann::json& obj);
  // Another live, valid DeviceConfig created earlier whose selector can match the same node.
  absl::StatusOr<std::optional<std::string>> OverlappingOwner(const DeviceConfig& dc);
  // GET /version, or the answer of less than kServerVersionMaxAge ago. When asking fails, an
  // older answer is kept; without one the pass fails (and is retried). A gitVersion that is not
  // vMAJOR.MINOR.PATCH[-+...] is nullopt: the scheduler image falls back to the settings'.
  absl::StatusOr<std::optional<KubeVersion>> ServerVersion();
  // The resource.k8s.io version DeviceClasses are written at ("v1", "v1beta1"); "" = none.
  absl::StatusOr<std::string> DraVersion();
  // Driver upgrades (upgrade.h): node labels and taints changed, events sent; the result
  // goes into status. Without a version (or in preinstalled mode) it only cleans up.
  absl::StatusOr<std::optional<UpgradePlan>> RollDriver(const DeviceConfig& dc,
                                                        const nlohmann::json& obj,
                                                        const std::vector<nlohmann::json>& nodes);
  absl::Status ApplyNodeChanges(const DeviceConfig& dc, const std::vector<NodeChange>& changes);
  // reconciler_drain.cc: the pods a drain still has to move off each node this DeviceConfig
  // cordoned for its version (one list per such node, by spec.nodeName) ...
  absl::StatusOr<NodePods> DrainPods(const DeviceConfig& dc,
                                     const std::vector<nlohmann::json>& nodes);
  // ... and the plan's evictions (a refusal by a budget is waited out) and force deletions,
  // counted into `plan`, with an Event on the DeviceConfig for each pod a budget holds.
  void RunDrains(const DeviceConfig& dc, const nlohmann::json& obj, UpgradePlan& plan);
  struct LiveChild {
    k8s::ResourceRef ref;
    std::string ns;
    nlohmann::json object;
  };
  // Children labelled for `dc` (of `component` when set) that exist now.
  absl::StatusOr<std::vector<LiveChild>> ListChildren(const DeviceConfig& dc,
                                                      const ClusterApis& apis,
                                                      std::optional<Component> component);
  // Deletes those of them that are not in `keep`.
  absl::Status DeleteChildren(const DeviceConfig& dc, const ClusterApis& apis,
                              const std::vector<Child>& keep, std::optional<Component> component);
  absl::Status WriteStatus(const nlohmann::json& obj, const nlohmann::json& status);
  // The DeviceConfig from the cache when it holds it, else from the API server.
  absl::StatusOr<nlohmann::json> ReadDeviceConfig(const std::string& ns, const std::string& name);
  // Server-side applies `c` unless the cached live object already holds all of it; returns the
  // live object either way.
  absl::StatusOr<nlohmann::json> ApplyIfChanged(const Child& c);
  // After a 404 for a kind discovery listed: discovery is read again on the next pass.
  void ForgetDiscovery();
  void Emit(const nlohmann::json& obj, const std::string& type, const std::string& reason,
            const std::string& message);

  k8s::RestClient& client_;
  const OperatorSettings settings_;
  NodesFn nodes_;
  k8s::EventRecorder* events_;
  Clock& clock_;
  k8s::Discovery discovery_;
  const CachedReader* reader_ = nullptr;
  absl::Duration discovery_max_age_ = absl::ZeroDuration();
  std::mutex discovery_mu_;
  absl::Time discovered_at_ = absl::InfinitePast();  // guarded by discovery_mu_

  std::mutex version_mu_;  // passes of different DeviceConfigs run concurrently
  std::optional<KubeVersion> server_version_;
  absl::Time server_version_at_ = absl::InfinitePast();  // when it was asked; never yet
};

}  // namespace neuron::op
