// File: lib/agent/allocation_collector.cc
// AllocationSnapshot -> neuron_core_allocation and the source's own health families.
#include "lib/agent/allocation_collector.h"

#include <string>
#include <utility>

#include "lib/metrics/exposition.h"

namespace neuron::agent {

AllocationCollector::AllocationCollector(std::function<AllocationSnapshot()> snapshot)
    : snapshot_(std::move(snapshot)) {}

std::vector<prometheus::MetricFamily> AllocationCollector::Collect() const {
  return AllocationFamilies(snapshot_());
}

std::vector<prometheus::MetricFamily> AllocationFamilies(const AllocationSnapshot& s) {
  using metrics::FamilyBuilder;
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> out;
  FamilyBuilder alloc("neuron_core_allocation",
                      "The pod, namespace and container holding each allocated physical "
                      "NeuronCore, by resource (aws.amazon.com/neuron, aws.amazon.com/neuroncore "
                      "or dra:neuron.aws.com), from the kubelet's PodResources API; value always "
                      "1. Join on (device, core).",
                      MetricType::Gauge);
  for (const CoreAllocation& c : s.cores) {
    alloc.Add({{"device", std::to_string(c.device)},
               {"core", std::to_string(c.core)},
               {"namespace", c.ns},
               {"pod", c.pod},
               {"container", c.container},
               {"resource", c.resource}},
              1);
  }
  if (!alloc.empty()) out.push_back(alloc.Build());
  // Present whenever attribution is on, so "no pods hold cores" and "no answer" read apart.
  FamilyBuilder up("neuron_agent_pod_resources_up",
                   "1 when the latest PodResources List on the kubelet's socket succeeded.",
                   MetricType::Gauge);
  up.Add({}, s.up ? 1 : 0);
  out.push_back(up.Build());
  FamilyBuilder errors("neuron_agent_pod_resources_errors_total",
                       "Failed PodResources List calls (a failure keeps the last answer for one "
                       "more interval).",
                       MetricType::Counter);
  errors.Add({}, static_cast<double>(s.list_errors));
  out.push_back(errors.Build());
  FamilyBuilder ignored("neuron_agent_pod_resources_ignored_entries",
                        "Entries of the PodResources answer in use that name no device or core of "
                        "this node (unknown IDs or DRA devices, empty names); see the agent's log.",
                        MetricType::Gauge);
  ignored.Add({}, s.ignored_entries);
  out.push_back(ignored.Build());
  return out;
}

}  // namespace neuron::agent
