// File: lib/deviceplugin/inventory_source.cc
#include "lib/deviceplugin/inventory_source.h"

#include <algorithm>

#include "lib/topology/topology.h"

namespace neuron::deviceplugin {

NodeSnapshot SnapshotFromInventory(const inventory::Inventory& inv) {
  NodeSnapshot snap;
  int devices = 0;
  int cpd = 0;
  std::optional<topology::DeviceModel> model;
  for (const inventory::Device& d : inv.devices) {
    devices = std::max(devices, d.index + 1);
    if (d.core_count > 0 && cpd == 0) cpd = d.core_count;
    if (d.model && !model) model = d.model;
  }
  if (cpd == 0 && model) cpd = model->physical_cores / std::max(1, model->default_lnc);
  if (cpd == 0) cpd = 1;
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
  if (shape != nullptr && shape->devices == devices && model && cpd > 0 &&
      model->physical_cores % cpd == 0) {
    auto t = topology::TopologyForShape(*shape, model->physical_cores / cpd);
    if (t.ok()) {
      snap.topology = *t;
      return snap;
    }
  }
  snap.topology = topology::TopologyFromLinks(family, cpd, std::move(links));
  return snap;
}

}  // namespace neuron::deviceplugin
