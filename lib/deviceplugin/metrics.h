// File: lib/deviceplugin/metrics.h
// The device plugin's Prometheus metrics (served by App on --metrics-listen):
//   neuron_deviceplugin_allocations_total{resource,result}    kubelet Allocate calls
//   neuron_deviceplugin_registrations_total{resource,result}  Register calls to the kubelet
//   neuron_deviceplugin_devices{resource,health}              units ListAndWatch advertises
//   neuron_deviceplugin_list_and_watch_streams{resource}      open ListAndWatch streams
// Labels are bounded: resource is one of the two resource names, result "ok"/"error", health
// "Healthy"/"Unhealthy". Thread-safe.
#pragma once

#include <memory>
#include <vector>

#include "lib/assignment/ids.h"
#include "lib/deviceplugin/allocator.h"
#include "lib/deviceplugin/device_source.h"
#include "prometheus/collectable.h"

namespace neuron::deviceplugin {

class PluginMetrics {
 public:
  // Every series of `resources` exists from the start (at 0), so rate() and alerts see the
  // first event.
  explicit PluginMetrics(const std::vector<assignment::ResourceKind>& resources = {
                             assignment::ResourceKind::kDevice, assignment::ResourceKind::kCore});
  ~PluginMetrics();
  PluginMetrics(const PluginMetrics&) = delete;
  PluginMetrics& operator=(const PluginMetrics&) = delete;

  void AllocateDone(assignment::ResourceKind kind, bool ok);
  void RegisterDone(assignment::ResourceKind kind, bool ok);
  void StreamOpened(assignment::ResourceKind kind);
  void StreamClosed(assignment::ResourceKind kind);

  // The devices gauge of `allocator`'s resource is allocator.Devices(source.Snapshot()) at each
  // scrape: the list ListAndWatch sends. Both must outlive every scrape.
  void WatchDevices(const Allocator& allocator, const DeviceSource& source);

  // For metrics::ServeMetrics / metrics::Expose; they expire with this object.
  std::vector<std::weak_ptr<prometheus::Collectable>> sources() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace neuron::deviceplugin
