// File: lib/deviceplugin/inventory_source.h
// DeviceSource over inventory::Watcher: devices, health and NUMA nodes from the latest scan;
// the topology from the instance shape when it is known and matches, else from the driver's
// connected_devices links.
#pragma once

#include <functional>

#include "lib/deviceplugin/device_source.h"
#include "lib/inventory/watcher.h"

namespace neuron::deviceplugin {

// Pure conversion (tested directly). Indices missing from the inventory are filled with
// unhealthy placeholders so that a device's index is its position.
NodeSnapshot SnapshotFromInventory(const inventory::Inventory& inv);

class InventorySource final : public DeviceSource {
 public:
  explicit InventorySource(inventory::Watcher& watcher) : watcher_(watcher) {}
  NodeSnapshot Snapshot() const override { return SnapshotFromInventory(watcher_.Current()); }
  void Subscribe(std::function<void()> on_change) override {
    watcher_.Subscribe([f = std::move(on_change)](const inventory::Inventory&) { f(); });
  }

 private:
  inventory::Watcher& watcher_;
};

}  // namespace neuron::deviceplugin
