// File: lib/deviceplugin/inventory_source.cc
#include "lib/deviceplugin/inventory_source.h"

#include <algorithm>

#include "lib/topology/topology.h"

namespace neuron::deviceplugin {

NodeSnapshot SnapshotFromInventory(const inventory::Inventory& inv) {
  NodeSnapshot snap;
  int devices = 0;
  int physical = 0;
  std::optional<topology::DeviceModel> model;
  for (const inventory::Device& d : inv.devices) {
    devices = std::max(devices, d.index + 1);
    if (d.physical_cores > 0 && physical == 0) physical = d.physical_cores;
    if (d.model && !model) model = d.model;
  }
  if (physical == 0 && model) physical = model->physical_cores;
  // Logical cores per device = physical / LNC. While LNC is unreadable (inv.lnc == 0) the count
  // is 0: aws.amazon.com/neuron stays advertised, aws.amazon.com/neuroncore advertises nothing,
  // since a wrong core count is worse than none.
  const int cpd = inv.lnc > 0 ? physical / inv.lnc : 0;
  std::vector<std::vector<int>> links(devices);
  snap.devices.resize(devices);
  for (int i = 0; i < devices; ++i) snap.devices[i] = {i, false, -1, cpd};
  for (const inventory::Device& d : inv.devices) {
    if (d.index < 0) continue;
    snap.devices[d.index] = {d.index, d.healthy && d.present, d.numa_node, cpd};
    links[d.index] = d.connected;
  }
  const topology::Family family = model ? model->family : topology::Family::kTrainium;
  const topology::Shape* shape = topology::FindShape(inv.instance_type);
  if (shape != nullptr && shape->devices == devices && model && inv.lnc > 0 &&
      physical == model->physical_cores) {
    auto t = topology::TopologyForShape(*shape, inv.lnc);
    if (t.ok()) {
      snap.topology = *t;
      return snap;
    }
  }
  snap.topology = topology::TopologyFromLinks(family, cpd, std::move(links));
  return snap;
}

}  // namespace neuron::deviceplugin
