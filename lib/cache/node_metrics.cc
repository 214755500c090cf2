// File: lib/cache/node_metrics.cc
#include "lib/cache/node_metrics.h"

#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"

namespace neuron::cache {
namespace {

// Seconds, from a small cache over loopback to several GiB over a slow link.
const prometheus::Histogram::BucketBoundaries kPullBuckets = {0.1, 0.5, 1,  2.5, 5,
                                                              10,  30,  60, 120, 300};

}  // namespace

CacheMetrics::CacheMetrics(prometheus::Registry& registry) {
  fetch_seconds_ = &prometheus::BuildHistogram()
                        .Name("neuron_cache_pull_fetch_seconds")
                        .Help("Time spent fetching one cache image's manifest and layers.")
                        .Register(registry)
                        .Add({}, kPullBuckets);
  extract_seconds_ = &prometheus::BuildHistogram()
                          .Name("neuron_cache_pull_extract_seconds")
                          .Help("Time spent extracting one cache image's layers.")
                          .Register(registry)
                          .Add({}, kPullBuckets);
  fetched_bytes_ = &prometheus::BuildCounter()
                        .Name("neuron_cache_fetched_bytes_total")
                        .Help("Compressed layer bytes fetched from registries.")
                        .Register(registry)
                        .Add({});
  extracted_bytes_ = &prometheus::BuildCounter()
                          .Name("neuron_cache_extracted_bytes_total")
                          .Help("File bytes written by cache extraction.")
                          .Register(registry)
                          .Add({});
  failures_ = &prometheus::BuildCounter()
                   .Name("neuron_cache_pull_failures_total")
                   .Help("Failed cache pulls, by reason (as on NeuronCacheNode).")
                   .Register(registry);
  auto& mounts = prometheus::BuildCounter()
                     .Name("neuron_cache_mounts_total")
                     .Help(
                         "Cache mounts asked for by pods: result=hit (served from the node's "
                         "extracted copy) or not_ready (refused; the kubelet retries).")
                     .Register(registry);
  hits_ = &mounts.Add({{"result", "hit"}});
  misses_ = &mounts.Add({{"result", "not_ready"}});
  images_ = &prometheus::BuildGauge()
                 .Name("neuron_cache_images")
                 .Help("Cache images (digests) extracted on this node.")
                 .Register(registry)
                 .Add({});
  ready_ = &prometheus::BuildGauge()
                .Name("neuron_cache_ready")
                .Help("Caches (NeuronCache, ClusterNeuronCache) mountable on this node.")
                .Register(registry)
                .Add({});
  disk_bytes_ = &prometheus::BuildGauge()
                     .Name("neuron_cache_disk_bytes")
                     .Help("Bytes of extracted cache images on this node.")
                     .Register(registry)
                     .Add({});
}

void CacheMetrics::Pulled(double fetch_seconds, double extract_seconds, uint64_t fetched_bytes,
                          uint64_t extracted_bytes) {
  fetch_seconds_->Observe(fetch_seconds);
  extract_seconds_->Observe(extract_seconds);
  fetched_bytes_->Increment(static_cast<double>(fetched_bytes));
  extracted_bytes_->Increment(static_cast<double>(extracted_bytes));
}

void CacheMetrics::PullFailed(const std::string& reason) {
  failures_->Add({{"reason", reason}}).Increment();
}

void CacheMetrics::Mount(bool hit) { (hit ? hits_ : misses_)->Increment(); }

void CacheMetrics::Holding(int images, int ready_entries, uint64_t disk_bytes) {
  images_->Set(images);
  ready_->Set(ready_entries);
  disk_bytes_->Set(static_cast<double>(disk_bytes));
}

}  // namespace neuron::cache
