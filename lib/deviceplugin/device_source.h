// File: lib/deviceplugin/device_source.h
// The plugin's view of the node's hardware: a snapshot of devices plus the topology the
// allocator needs, and a change callback. The real source adapts inventory::Watcher
// (inventory_source.h); tests use a settable double.
#pragma once

#include <functional>
#include <vector>

#include "lib/topology/node_topology.h"

namespace neuron::deviceplugin {

struct DeviceState {
  int index = 0;        // N of /dev/neuronN
  bool healthy = true;  // present, bound, no uncorrectable error
  int numa_node = -1;   // PCI numa_node; -1 = unknown (TopologyInfo omitted)
  int cores = 0;        // logical cores on this device
};

struct NodeSnapshot {
  std::vector<DeviceState> devices;  // sorted by index; index == position (0..n-1)
  topology::NodeTopology topology{};
  int cores_per_device() const { return topology.cores_per_device; }
  int total_cores() const { return static_cast<int>(devices.size()) * cores_per_device(); }
};

class DeviceSource {
 public:
  virtual ~DeviceSource() = default;
  virtual NodeSnapshot Snapshot() const = 0;
  // `on_change` runs (on the source's thread) after devices or health changed. Subscribers are
  // never removed: register only callbacks that outlive the source or tolerate late calls.
  virtual void Subscribe(std::function<void()> on_change) = 0;
};

}  // namespace neuron::deviceplugin
