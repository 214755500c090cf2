// File: lib/cache/node_metrics.h
// The node side's cache metrics (served with the node agent's /metrics): pulls with their
// duration and bytes, failures by reason, mounts served from an extracted cache (hits) or refused
// because it was not ready, and what the node holds.
#pragma once

#include <memory>
#include <string>

#include "prometheus/registry.h"

namespace prometheus {
class Counter;
class Gauge;
class Histogram;
template <typename T>
class Family;
}  // namespace prometheus

namespace neuron::cache {

class CacheMetrics {
 public:
  explicit CacheMetrics(prometheus::Registry& registry);

  void Pulled(double fetch_seconds, double extract_seconds, uint64_t fetched_bytes,
              uint64_t extracted_bytes);
  void PullFailed(const std::string& reason);
  // A pod's volume or claim was given an extracted cache (hit) / refused (not ready).
  void Mount(bool hit);
  void Holding(int images, int ready_entries, uint64_t disk_bytes);

 private:
  prometheus::Histogram* fetch_seconds_;
  prometheus::Histogram* extract_seconds_;
  prometheus::Counter* fetched_bytes_;
  prometheus::Counter* extracted_bytes_;
  prometheus::Family<prometheus::Counter>* failures_;
  prometheus::Counter* hits_;
  prometheus::Counter* misses_;
  prometheus::Gauge* images_;
  prometheus::Gauge* ready_;
  prometheus::Gauge* disk_bytes_;
};

}  // namespace neuron::cache
