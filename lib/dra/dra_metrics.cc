// File: lib/dra/dra_metrics.cc
#include "lib/dra/dra_metrics.h"

#include "absl/time/clock.h"
#include "lib/dra/neuron_preparer.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace neuron::dra {
namespace {

prometheus::Family<prometheus::Counter>& Counter(prometheus::Registry& r, const char* name,
                                                 const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r);
}

prometheus::Family<prometheus::Gauge>& Gauge(prometheus::Registry& r, const char* name,
                                             const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(r);
}

}  // namespace

struct DraMetrics::Impl {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>& prepare = Counter(
      *registry, "neuron_dra_prepare_total",
      "Claims the kubelet asked to prepare (NodePrepareResources), by result (error: the pod "
      "does not start; the kubelet retries).");
  prometheus::Family<prometheus::Counter>& unprepare =
      Counter(*registry, "neuron_dra_unprepare_total",
              "Claims the kubelet asked to unprepare (NodeUnprepareResources), by result.");
  prometheus::Family<prometheus::Counter>& publish =
      Counter(*registry, "neuron_dra_slice_publish_total",
              "ResourceSlice publish attempts, by result (errors are retried with backoff).");
  prometheus::Family<prometheus::Gauge>& prepared =
      Gauge(*registry, "neuron_dra_prepared_claims",
            "Claims recorded as prepared on this node (the checkpoint).");
  prometheus::Family<prometheus::Gauge>& generation =
      Gauge(*registry, "neuron_dra_slice_pool_generation",
            "The pool generation of the node's ResourceSlices as last published (rises with "
            "every change of devices or health).");
  prometheus::Histogram& prepare_seconds =
      prometheus::BuildHistogram()
          .Name("neuron_dra_prepare_seconds")
          .Help(
              "NodePrepareResources latency inside the driver (claim read, CDI write, "
              "checkpoint).")
          .Register(*registry)
          .Add({},
               prometheus::Histogram::BucketBoundaries{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5});

  prometheus::Counter& Prepare(bool ok) { return prepare.Add({{"result", ok ? "ok" : "error"}}); }
  prometheus::Counter& Unprepare(bool ok) {
    return unprepare.Add({{"result", ok ? "ok" : "error"}});
  }
  prometheus::Counter& Publish(bool ok) { return publish.Add({{"result", ok ? "ok" : "error"}}); }
};

DraMetrics::DraMetrics() : impl_(std::make_unique<Impl>()) {
  for (bool ok : {true, false}) {  // every series from the start, so rate() sees the first event
    impl_->Prepare(ok);
    impl_->Unprepare(ok);
    impl_->Publish(ok);
  }
  impl_->prepared.Add({});
  impl_->generation.Add({});
}

DraMetrics::~DraMetrics() = default;

void DraMetrics::Prepared(int ok, int failed, absl::Duration took) {
  impl_->Prepare(true).Increment(ok);
  impl_->Prepare(false).Increment(failed);
  impl_->prepare_seconds.Observe(absl::ToDoubleSeconds(took));
}

void DraMetrics::Unprepared(int ok, int failed) {
  impl_->Unprepare(true).Increment(ok);
  impl_->Unprepare(false).Increment(failed);
}

void DraMetrics::PreparedClaims(size_t count) {
  impl_->prepared.Add({}).Set(static_cast<double>(count));
}

void DraMetrics::Published(bool ok, int64_t generation) {
  impl_->Publish(ok).Increment();
  if (ok) impl_->generation.Add({}).Set(static_cast<double>(generation));
}

std::vector<std::weak_ptr<prometheus::Collectable>> DraMetrics::sources() const {
  return {impl_->registry};
}

InstrumentedPreparer::InstrumentedPreparer(NeuronPreparer& inner, DraMetrics& metrics)
    : inner_(inner), metrics_(metrics) {
  metrics_.PreparedClaims(inner_.PreparedClaims().size());
}

PrepareResults InstrumentedPreparer::Prepare(const std::vector<ClaimRef>& claims) {
  const absl::Time start = absl::Now();
  PrepareResults results = inner_.Prepare(claims);
  int ok = 0;
  for (const auto& [uid, r] : results) ok += r.ok() ? 1 : 0;
  // A claim missing from the results fails at the kubelet too.
  metrics_.Prepared(ok, static_cast<int>(claims.size()) - ok, absl::Now() - start);
  metrics_.PreparedClaims(inner_.PreparedClaims().size());
  return results;
}

UnprepareResults InstrumentedPreparer::Unprepare(const std::vector<ClaimRef>& claims) {
  UnprepareResults results = inner_.Unprepare(claims);
  int ok = 0;
  for (const auto& [uid, s] : results) ok += s.ok() ? 1 : 0;
  metrics_.Unprepared(ok, static_cast<int>(claims.size()) - ok);
  metrics_.PreparedClaims(inner_.PreparedClaims().size());
  return results;
}

}  // namespace neuron::dra
