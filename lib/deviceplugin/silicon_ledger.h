// File: lib/deviceplugin/silicon_ledger.h
// aws.amazon.com/neuron and aws.amazon.com/neuroncore are two views of the same silicon (logical
// core c lies on device c / cores_per_device), but the kubelet accounts for each resource on its
// own. The ledger says which devices are held through each resource, so that neither endpoint
// hands out, in whole or in part, a device the other one already gave to a pod. It combines:
//   * the kubelet's PodResources List: authoritative, names the pod, and survives a restart of
//     the plugin (in-memory bookkeeping alone would forget everything);
//   * Allocates this process answered recently: the kubelet lists a container's devices only
//     once its pod is admitted, so an admission in that window would otherwise see them free.
//     A recent entry is dropped once PodResources lists its IDs (the pod is accounted there from
//     then on, and released when it ends) or after `recent_ttl` (the pod never got admitted).
// Held devices stay advertised as Healthy: the kubelet keeps its own per-resource accounting.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lib/assignment/ids.h"
#include "lib/base/clock.h"
#include "lib/deviceplugin/device_source.h"
#include "lib/deviceplugin/pod_resources.h"

namespace neuron::deviceplugin {

class SiliconLedger {
 public:
  // `list` is PodResources List (ListPodHoldings in production). On failure the ledger falls
  // back to its recent Allocates and logs a warning: a node without the pod-resources mount
  // still serves, with only in-process protection.
  using ListFn = std::function<absl::StatusOr<std::vector<PodHoldings>>()>;
  SiliconLedger(ListFn list, Clock& clock, absl::Duration recent_ttl = absl::Seconds(30));

  // Devices held through the resource other than `kind`, each with a description of its holder
  // ("pod ml/train", or a recent Allocate not yet listed by the kubelet).
  std::map<int, std::string> HeldByOther(assignment::ResourceKind kind, const NodeSnapshot& node);

  // Allocate's gate. FailedPrecondition, naming the holder, when `ids` of `kind` touch a device
  // held through the other resource; otherwise records them as a recent Allocate. Check and
  // record are atomic, so two concurrent Allocates of the two resources cannot both pass.
  absl::Status Claim(assignment::ResourceKind kind, const NodeSnapshot& node,
                     const std::vector<int>& ids);

  // Recent Allocates still remembered (tests).
  int recent_count() const;

 private:
  struct Recent {
    assignment::ResourceKind kind;
    std::vector<int> ids;
    absl::Time at;
  };

  // Lists (outside the lock); nullopt when List failed.
  std::optional<std::vector<PodHoldings>> List();
  // Drops expired entries and entries the kubelet now lists.
  void Prune(const std::optional<std::vector<PodHoldings>>& listed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::map<int, std::string> Held(assignment::ResourceKind through, const NodeSnapshot& node,
                                  const std::optional<std::vector<PodHoldings>>& listed) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  ListFn list_;
  Clock& clock_;
  absl::Duration ttl_;
  mutable absl::Mutex mu_;
  std::vector<Recent> recent_ ABSL_GUARDED_BY(mu_);
};

// The device an ID of `kind` lies on (-1 when cores_per_device is unknown).
int DeviceOf(assignment::ResourceKind kind, int id, const NodeSnapshot& node);

}  // namespace neuron::deviceplugin
