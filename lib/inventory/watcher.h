// File: lib/inventory/watcher.h
// Periodic rescans plus two-way device health.
//
// Health rules (per device index, applied on every Poll):
//   * unhealthy "vanished"          the device's neuronN entry and its PCI function are gone
//   * unhealthy "driver unbound"    neuronN is gone (or its PCI function has no driver) but the
//                                   PCI function is still there
//   * unhealthy "uncorrectable ECC error"  a counter of sysfs::UncorrectableErrorCounters()
//                                   rose since the previous poll (not its absolute value: the
//                                   counters are cumulative since boot)
//   * healthy again once the device is present and bound and no counter has risen for
//     `healthy_after` (measured on the injected Clock).
// Devices that were seen once and then disappear stay in the snapshot with present=false.
//
//   Watcher w(*fs, Clock::Real(), {});
//   w.Subscribe([](const Inventory& inv) { ... });
//   std::thread t([&] { w.Run(stop); });
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "lib/base/clock.h"
#include "lib/inventory/inventory.h"
#include "lib/sysfs/fs.h"

namespace neuron::inventory {

struct WatcherOptions {
  absl::Duration interval = absl::Seconds(5);
  absl::Duration healthy_after = absl::Seconds(30);  // quiet period before unhealthy -> healthy
  ScanOptions scan = {};                             // node name, known instance type
};

class Watcher {
 public:
  Watcher(const sysfs::Fs& fs, Clock& clock, WatcherOptions opts);

  // One rescan now. Applies health rules; returns true if devices or health changed (the first
  // successful Poll always returns true). A failed scan keeps the previous snapshot, counts a
  // read error and returns false.
  bool Poll();
  Inventory Current() const;  // thread-safe copy
  // Called (from the polling thread) after every Poll that changed devices/health.
  void Subscribe(std::function<void(const Inventory&)> on_change);
  void Run(absl::Notification& stop);  // Poll() every interval (via clock) until stop

 private:
  struct Track {  // health memory per device index
    std::map<std::string, uint64_t> last_counters;
    absl::Time last_bad = absl::InfinitePast();  // last poll that saw a fault
    bool healthy = true;
    std::string reason;
    Device last_seen;
  };

  Clock& clock_;
  WatcherOptions opts_;
  const sysfs::Fs& fs_;
  Scanner scanner_;  // used only from the polling thread
  std::map<int, Track> tracks_;
  mutable absl::Mutex mu_;
  bool first_ ABSL_GUARDED_BY(mu_) = true;
  Inventory current_ ABSL_GUARDED_BY(mu_);
  std::vector<std::function<void(const Inventory&)>> subscribers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace neuron::inventory
