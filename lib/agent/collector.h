// File: lib/agent/collector.h
// Turns an inventory snapshot into Prometheus families at scrape time. Names follow Prometheus
// conventions (base units, `_total` on counters); every driver counter and memory figure of
// the Neuron sysfs (NEURON.md §5) has a family here.
#pragma once

#include <functional>
#include <vector>

#include "lib/inventory/inventory.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace neuron::agent {

class InventoryCollector final : public prometheus::Collectable {
 public:
  // `snapshot` returns the latest inventory; it is called once per scrape.
  explicit InventoryCollector(std::function<inventory::Inventory()> snapshot);
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::function<inventory::Inventory()> snapshot_;
};

// The families for one snapshot (exposed for tests and benchmarks).
std::vector<prometheus::MetricFamily> InventoryFamilies(const inventory::Inventory& inv);

}  // namespace neuron::agent
