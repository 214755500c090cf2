// File: lib/operator/operator_metrics.h
// The operator's Prometheus metrics: reconcile passes (count, errors, duration), work queue
// depth, leadership, and where each DeviceConfig's driver rollout stands; compiled-model caches
// by Ready state and failed digest resolutions.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lib/operator/reconciler.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace neuron::op {

class OperatorMetrics {
 public:
  explicit OperatorMetrics(prometheus::Registry& registry);

  // One pass of `key` (namespace/name). Not concurrent for one key (see PassObserver); the
  // rollout series of a key go when a pass reports no rollout (deleted, or no version managed).
  void ObservePass(const std::string& key, absl::Duration took,
                   const absl::StatusOr<ReconcileResult>& result, size_t queue_depth);
  void SetLeader(bool leading) { leader_.Set(leading ? 1 : 0); }

 private:
  void SetRollout(const std::string& key, const UpgradeProgress& p);
  void DropRollout(const std::string& key);

  prometheus::Family<prometheus::Counter>& passes_;
  prometheus::Counter& errors_;
  prometheus::Histogram& duration_;
  prometheus::Gauge& depth_;
  prometheus::Gauge& leader_;
  prometheus::Family<prometheus::Gauge>& upgrade_nodes_;
  prometheus::Family<prometheus::Gauge>& upgrade_seconds_;
  prometheus::Family<prometheus::Counter>& drain_pods_;
  prometheus::Family<prometheus::Histogram>& drain_seconds_;
};

// Compiled-model caches (cache_controller.h): how many caches are Ready and not, and how often
// resolving a tag failed. Thread-safe (the cache controller's workers call it).
class CacheMetrics {
 public:
  explicit CacheMetrics(prometheus::Registry& registry);

  // A cache's Ready condition after a pass; nullopt when the cache is gone.
  void SetReady(const std::string& key, std::optional<bool> ready);
  void CountResolveFailure() { resolve_failures_.Increment(); }

 private:
  absl::Mutex mu_;
  std::map<std::string, bool> ready_ ABSL_GUARDED_BY(mu_);
  prometheus::Family<prometheus::Gauge>& caches_;
  prometheus::Gauge& ready_true_;
  prometheus::Gauge& ready_false_;
  prometheus::Counter& resolve_failures_;
};

}  // namespace neuron::op
