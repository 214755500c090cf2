// The node topologies every property test runs on: every shape (trn2 at LNC 1 and 2) plus graphs
// that only TopologyFromLinks produces (irregular, all-to-all, disconnected, shuffled ring).
#ifndef NEURON_TESTS_TOPOLOGY_TOPOLOGIES_H_
#define NEURON_TESTS_TOPOLOGY_TOPOLOGIES_H_

#include <string>
#include <vector>

#include "lib/topology/topology.h"

namespace neuron::topology::testing {

struct NamedTopology {
  std::string name;
  NodeTopology topology;
};

inline std::vector<NamedTopology> TestTopologies() {
  std::vector<NamedTopology> out;
  for (const Shape& s : AllShapes()) {
    const DeviceModel model = *ModelForPciDevice(s.pci_device_id);
    if (model.lnc_capable) {
      out.push_back({s.instance_type + "/lnc1", *TopologyForShape(s, 1)});
      out.push_back({s.instance_type + "/lnc2", *TopologyForShape(s, 2)});
    } else {
      out.push_back({s.instance_type, *TopologyForShape(s)});
    }
  }
  // trn1 torus with device 15 gone: an irregular graph of 15 devices.
  std::vector<std::vector<int>> torn = FindShape("trn1.32xlarge")->links;
  torn.pop_back();
  for (auto& l : torn) std::erase(l, 15);
  out.push_back({"irregular15", TopologyFromLinks(Family::kTrainium, 2, torn)});
  // 8 devices, all linked (a switched fabric).
  std::vector<std::vector<int>> full(8);
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      if (a != b) full[a].push_back(b);
    }
  }
  out.push_back({"alltoall8", TopologyFromLinks(Family::kTrainium3, 4, full)});
  // Two separate rings 0-1-2-3 and 4-5-6-7.
  out.push_back(
      {"two_rings",
       TopologyFromLinks(Family::kInferentia, 4,
                         {{1, 3}, {0, 2}, {1, 3}, {2, 0}, {5, 7}, {4, 6}, {5, 7}, {6, 4}})});
  // A ring of 8 whose order is not the index order: 0-5-2-7-1-6-3-4-0.
  const std::vector<int> order = {0, 5, 2, 7, 1, 6, 3, 4};
  std::vector<std::vector<int>> shuffled(8);
  for (int i = 0; i < 8; ++i) {
    shuffled[order[i]] = {order[(i + 7) % 8], order[(i + 1) % 8]};
  }
  out.push_back({"shuffled_ring8", TopologyFromLinks(Family::kInferentia2, 2, shuffled)});
  return out;
}

}  // namespace neuron::topology::testing

#endif  // NEURON_TESTS_TOPOLOGY_TOPOLOGIES_H_
