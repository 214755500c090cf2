// File: lib/agent/allocation_collector.h
// Which pod holds each NeuronCore, as Prometheus series: one info series per allocated
// physical core,
//   neuron_core_allocation{device="3",core="12",namespace="ml",pod="train-0",container="main",
//                          resource="aws.amazon.com/neuroncore"} 1
// with the `device` and `core` labels of the per-core families (collector.h), rather than pod
// labels on every counter: one series per allocated core whatever the number of counters, the
// counters' series do not churn as pods come and go, and a join gives per-pod views:
//   neuron_core_memory_used_bytes * on(device, core) group_left(namespace, pod, container)
//     neuron_core_allocation
// (a core of a ResourceClaim shared by several pods has one series per pod; such a join then
// needs the pods aggregated first). Beside it, the health of the source:
// neuron_agent_pod_resources_up, neuron_agent_pod_resources_errors_total and
// neuron_agent_pod_resources_ignored_entries.
#pragma once

#include <functional>
#include <vector>

#include "lib/agent/pod_attribution_source.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace neuron::agent {

class AllocationCollector final : public prometheus::Collectable {
 public:
  // `snapshot` is called once per collection (PodAttributionSource::Snapshot).
  explicit AllocationCollector(std::function<AllocationSnapshot()> snapshot);
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::function<AllocationSnapshot()> snapshot_;
};

// The families for one snapshot (exposed for tests).
std::vector<prometheus::MetricFamily> AllocationFamilies(const AllocationSnapshot& s);

}  // namespace neuron::agent
