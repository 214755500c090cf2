// File: lib/dra/dra_metrics.h
// The DRA driver's Prometheus metrics (served by DraApp on --metrics-listen):
//   neuron_dra_prepare_total{result}          claims prepared (NodePrepareResources), ok/error
//   neuron_dra_unprepare_total{result}        claims unprepared, ok/error
//   neuron_dra_prepare_seconds                NodePrepareResources call latency (histogram)
//   neuron_dra_prepared_claims                claims recorded as prepared (checkpoint)
//   neuron_dra_slice_publish_total{result}    ResourceSlice publish attempts, ok/error
//   neuron_dra_slice_pool_generation          the pool generation last published
// Labels are bounded (result is "ok" or "error"). Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "lib/dra/claim_preparer.h"
#include "prometheus/collectable.h"

namespace neuron::dra {

class NeuronPreparer;

class DraMetrics {
 public:
  DraMetrics();
  ~DraMetrics();
  DraMetrics(const DraMetrics&) = delete;
  DraMetrics& operator=(const DraMetrics&) = delete;

  void Prepared(int ok, int failed, absl::Duration took);
  void Unprepared(int ok, int failed);
  void PreparedClaims(size_t count);
  void Published(bool ok, int64_t generation);

  // For metrics::ServeMetrics; they expire with this object.
  std::vector<std::weak_ptr<prometheus::Collectable>> sources() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The ClaimPreparer the kubelet plugin serves: NeuronPreparer, counted into DraMetrics.
class InstrumentedPreparer final : public ClaimPreparer {
 public:
  InstrumentedPreparer(NeuronPreparer& inner, DraMetrics& metrics);
  PrepareResults Prepare(const std::vector<ClaimRef>& claims) override;
  UnprepareResults Unprepare(const std::vector<ClaimRef>& claims) override;

 private:
  NeuronPreparer& inner_;
  DraMetrics& metrics_;
};

}  // namespace neuron::dra
