// File: lib/operator/operator_metrics.cc
#include "lib/operator/operator_metrics.h"

#include <utility>

namespace neuron::op {
namespace {

constexpr const char* kStates[] = {"pending", "draining", "upgrading", "done", "failed"};

}  // namespace

OperatorMetrics::OperatorMetrics(prometheus::Registry& registry)
    : passes_(prometheus::BuildCounter()
                  .Name("neuron_operator_reconcile_total")
                  .Help("Reconcile passes of DeviceConfigs, by result.")
                  .Register(registry)),
      errors_(prometheus::BuildCounter()
                  .Name("neuron_operator_reconcile_errors_total")
                  .Help("Reconcile passes that failed and were queued again with backoff.")
                  .Register(registry)
                  .Add({})),
      duration_(prometheus::BuildHistogram()
                    .Name("neuron_operator_reconcile_duration_seconds")
                    .Help("Time of one reconcile pass.")
                    .Register(registry)
                    .Add({}, prometheus::Histogram::BucketBoundaries{0.005, 0.01, 0.025, 0.05, 0.1,
                                                                     0.25, 0.5, 1, 2.5, 5, 10})),
      depth_(prometheus::BuildGauge()
                 .Name("neuron_operator_work_queue_depth")
                 .Help("DeviceConfig keys waiting for a reconcile pass.")
                 .Register(registry)
                 .Add({})),
      leader_(prometheus::BuildGauge()
                  .Name("neuron_operator_leader")
                  .Help("1 while this replica holds the leader lease.")
                  .Register(registry)
                  .Add({})),
      upgrade_nodes_(prometheus::BuildGauge()
                         .Name("neuron_operator_upgrade_nodes")
                         .Help("Nodes of a DeviceConfig's driver rollout, by state (pending, "
                               "draining, upgrading, done, failed).")
                         .Register(registry)),
      upgrade_seconds_(prometheus::BuildGauge()
                           .Name("neuron_operator_upgrade_node_seconds")
                           .Help("How long the node upgrading longest has been upgrading (0 "
                                 "when none is).")
                           .Register(registry)),
      drain_pods_(prometheus::BuildCounter()
                      .Name("neuron_operator_drain_pods_total")
                      .Help("Pods a driver upgrade's drain acted on, by result (evicted, refused "
                            "by a PodDisruptionBudget, deleted after the timeout with force).")
                      .Register(registry)),
      drain_seconds_(prometheus::BuildHistogram()
                         .Name("neuron_operator_drain_duration_seconds")
                         .Help("From cordon to the last Neuron pod gone, per drained node.")
                         .Register(registry)) {}

void OperatorMetrics::ObservePass(const std::string& key, absl::Duration took,
                                  const absl::StatusOr<ReconcileResult>& result,
                                  size_t queue_depth) {
  passes_.Add({{"result", result.ok() ? "success" : "error"}}).Increment();
  if (!result.ok()) errors_.Increment();
  duration_.Observe(absl::ToDoubleSeconds(took));
  depth_.Set(static_cast<double>(queue_depth));
  if (!result.ok()) return;  // a failed pass says nothing new about the rollout
  if (result->upgrade) {
    SetRollout(key, *result->upgrade);
  } else {
    DropRollout(key);
  }
}

void OperatorMetrics::SetRollout(const std::string& key, const UpgradeProgress& p) {
  const int counts[] = {p.pending, p.draining, p.upgrading, p.done, p.failed};
  for (size_t i = 0; i < std::size(kStates); ++i) {
    upgrade_nodes_.Add({{"deviceconfig", key}, {"state", kStates[i]}}).Set(counts[i]);
  }
  upgrade_seconds_.Add({{"deviceconfig", key}}).Set(absl::ToDoubleSeconds(p.longest_upgrading));
  const std::pair<const char*, int> pods[] = {
      {"evicted", p.evicted}, {"refused", p.eviction_refused}, {"deleted", p.deleted}};
  for (const auto& [result, n] : pods) {
    if (n > 0) drain_pods_.Add({{"deviceconfig", key}, {"result", result}}).Increment(n);
  }
  for (absl::Duration d : p.drain_durations) {
    drain_seconds_
        .Add({{"deviceconfig", key}},
             prometheus::Histogram::BucketBoundaries{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600})
        .Observe(absl::ToDoubleSeconds(d));
  }
}

void OperatorMetrics::DropRollout(const std::string& key) {
  // Family::Add returns the existing series; only remove series that exist.
  if (!upgrade_seconds_.Has({{"deviceconfig", key}})) return;
  for (const char* state : kStates) {
    upgrade_nodes_.Remove(&upgrade_nodes_.Add({{"deviceconfig", key}, {"state", state}}));
  }
  upgrade_seconds_.Remove(&upgrade_seconds_.Add({{"deviceconfig", key}}));
}

CacheMetrics::CacheMetrics(prometheus::Registry& registry)
    : caches_(prometheus::BuildGauge()
                  .Name("neuron_operator_caches")
                  .Help("NeuronCaches and ClusterNeuronCaches, by their Ready condition.")
                  .Register(registry)),
      ready_true_(caches_.Add({{"ready", "true"}})),
      ready_false_(caches_.Add({{"ready", "false"}})),
      resolve_failures_(prometheus::BuildCounter()
                            .Name("neuron_operator_cache_resolve_failures_total")
                            .Help("Times resolving a cache's image tag to a digest failed.")
                            .Register(registry)
                            .Add({})) {}

void CacheMetrics::SetReady(const std::string& key, std::optional<bool> ready) {
  absl::MutexLock lock(&mu_);
  if (ready.has_value()) {
    ready_[key] = *ready;
  } else {
    ready_.erase(key);
  }
  int64_t yes = 0;
  for (const auto& [k, r] : ready_) yes += r ? 1 : 0;
  ready_true_.Set(static_cast<double>(yes));
  ready_false_.Set(static_cast<double>(static_cast<int64_t>(ready_.size()) - yes));
}

}  // namespace neuron::op
