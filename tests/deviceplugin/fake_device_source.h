// File: tests/deviceplugin/fake_device_source.h
// A settable DeviceSource: tests change devices/health and fire the change callbacks.
#pragma once

#include <functional>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "lib/deviceplugin/device_source.h"
#include "lib/topology/topology.h"

namespace neuron::deviceplugin::testing {

// A snapshot of `instance_type` at its default LNC: every device healthy, NUMA nodes split as
// the shape says.
inline NodeSnapshot SnapshotForShape(const topology::Shape& shape, int lnc = 0) {
  NodeSnapshot snap;
  snap.topology = *topology::TopologyForShape(shape, lnc);
  const int per_numa =
      shape.numa_nodes > 0 ? (shape.devices + shape.numa_nodes - 1) / shape.numa_nodes : 0;
  for (int d = 0; d < shape.devices; ++d) {
    snap.devices.push_back(
        {d, true, per_numa > 0 ? d / per_numa : -1, snap.topology.cores_per_device});
  }
  return snap;
}

class FakeDeviceSource final : public DeviceSource {
 public:
  explicit FakeDeviceSource(NodeSnapshot snap) : snap_(std::move(snap)) {}

  NodeSnapshot Snapshot() const override {
    absl::MutexLock lock(&mu_);
    return snap_;
  }
  void Subscribe(std::function<void()> on_change) override {
    absl::MutexLock lock(&mu_);
    subscribers_.push_back(std::move(on_change));
  }
  void SetHealthy(int device, bool healthy) {
    std::vector<std::function<void()>> subs;
    {
      absl::MutexLock lock(&mu_);
      snap_.devices[device].healthy = healthy;
      subs = subscribers_;
    }
    for (auto& f : subs) f();
  }

 private:
  mutable absl::Mutex mu_;
  NodeSnapshot snap_ ABSL_GUARDED_BY(mu_);
  std::vector<std::function<void()>> subscribers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace neuron::deviceplugin::testing
