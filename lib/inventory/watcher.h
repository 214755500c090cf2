// File: lib/inventory/watcher.h
// Periodic rescans plus two-way device health, on two paces:
//   * Poll(): the full rescan (every `interval`, 5 s): devices, attributes, counters;
//   * PollHealth(): the fast path (every `health_interval`, 50 ms, on its own thread in Run):
//     reads only what health depends on (HealthProbe: class dir, PCI driver link, uncorrectable
//     counters) and applies the same rules, so a fault reaches subscribers within about one
//     health_interval, even while a full rescan is running.
//
// Health rules (per device index, applied on every Poll):
//   * unhealthy "vanished"          the device's neuronN entry and its PCI function are gone
//   * unhealthy "driver unbound"    neuronN is gone (or its PCI function has no driver) but the
//                                   PCI function is still there
//   * unhealthy "uncorrectable ECC error"  a counter of sysfs::UncorrectableErrorCounters()
//                                   rose since the previous poll (not its absolute value: the
//                                   counters are cumulative since boot); "hardware error event"
//                                   for the driver's hw_error_event (both paces)
//   * from the driver's own health status (drivers 2.28+, when it publishes it; full rescan):
//       "driver reports unhealthy components: <list>"   unhealthy_components lists something
//                                   (as long as it does);
//       "uncorrectable ECC error (driver health status <leaf>)"  hbm/sram_ecc_err_count rose;
//       "driver health heartbeat stopped"  healthcheck_heartbeat moved before and has not moved
//                                   for `heartbeat_timeout` (a heartbeat never seen moving is
//                                   not judged: the driver may not run its health check)
//   * healthy again once the device is present and bound, the driver lists nothing and no
//     counter has risen for `healthy_after` (measured on the injected Clock; both paces).
// Devices that were seen once and then disappear stay in the snapshot with present=false.
//
//   Watcher w(*fs, Clock::Real(), {});
//   w.Subscribe([](const Inventory& inv) { ... });
//   std::thread t([&] { w.Run(stop); });
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "lib/base/clock.h"
#include "lib/inventory/health_probe.h"
#include "lib/inventory/inventory.h"
#include "lib/sysfs/fs.h"

namespace neuron::inventory {

struct WatcherOptions {
  absl::Duration interval = absl::Seconds(5);               // full rescan
  absl::Duration health_interval = absl::Milliseconds(50);  // fast path; <= 0 = off
  absl::Duration healthy_after = absl::Seconds(30);  // quiet period before unhealthy -> healthy
  ScanOptions scan = {};                             // node name, known instance type
  // How long the driver's healthcheck_heartbeat may stand still, once seen moving.
  absl::Duration heartbeat_timeout = absl::Minutes(2);
};

class Watcher {
 public:
  Watcher(const sysfs::Fs& fs, Clock& clock, WatcherOptions opts);

  // One rescan now. Applies health rules; returns true if devices or health changed (the first
  // successful Poll always returns true). A failed scan keeps the previous snapshot, counts a
  // read error and returns false. Health is judged from the probe's reads taken after the scan,
  // so a slow scan never overrides what the fast path saw meanwhile.
  bool Poll() ABSL_LOCKS_EXCLUDED(scan_mu_, health_mu_);
  // The fast path over the devices of the last Poll. Returns true when it changed the snapshot
  // (health, presence or an uncorrectable counter value); subscribers are told, as after Poll,
  // when devices/health changed. A device coming back triggers a full Poll. Safe to call from
  // another thread than Poll (Run does); a no-op before the first Poll.
  bool PollHealth() ABSL_LOCKS_EXCLUDED(scan_mu_, health_mu_);
  Inventory Current() const;  // thread-safe copy
  // Called (from a polling thread, one call at a time) after every Poll/PollHealth that
  // changed devices/health (or the UltraServer identity). Must not call Poll/PollHealth.
  void Subscribe(std::function<void(const Inventory&)> on_change);
  // Poll() every interval and, on a second thread, PollHealth() every health_interval (both
  // via the clock) until stop.
  void Run(absl::Notification& stop);

 private:
  struct Track {                                         // health memory per device index
    std::vector<std::optional<uint64_t>> last_counters;  // per HealthCounters()
    absl::Time last_bad = absl::InfinitePast();          // last poll that saw a fault
    bool healthy = true;
    bool present = true;      // class dir as last read
    bool bound = true;        // driver link (present devices) as last read
    bool pci_present = true;  // PCI function dir (gone devices) as last read
    std::string driver;       // driver link's last component as last read
    std::string reason;
    Device last_seen;
    // The driver's health status as of the last full rescan.
    std::string driver_bad;                       // a standing reason; "" = nothing standing
    std::map<std::string, uint64_t> last_status;  // health_status counters last seen
    std::optional<uint64_t> heartbeat;            // healthcheck_heartbeat last seen
    absl::Time heartbeat_moved = absl::InfinitePast();
    bool heartbeat_ever_moved = false;
  };
  // Judges the driver's health status of a freshly scanned device into t (driver_bad, and
  // last_bad/reason for a rising ECC count).
  void ApplyDriverStatus(int index, Track& t, const Device& d, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(health_mu_);
  // The health rules; each returns true when the device's health or presence changed.
  // `counter(k)` is the k-th of HealthCounters() as read now (nullopt = not readable).
  bool ApplyPresent(int index, Track& t, bool bound,
                    absl::FunctionRef<std::optional<uint64_t>(size_t)> counter, absl::Time now,
                    bool* counters_moved) ABSL_EXCLUSIVE_LOCKS_REQUIRED(health_mu_);
  bool ApplyGone(int index, Track& t, bool pci_present, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(health_mu_);
  // Stores `inv` as the snapshot and tells subscribers if devices/health changed.
  bool Publish(const Inventory& inv) ABSL_EXCLUSIVE_LOCKS_REQUIRED(health_mu_);

  Clock& clock_;
  WatcherOptions opts_;
  const sysfs::Fs& fs_;
  // Lock order: scan_mu_, health_mu_, mu_. The slow scan holds only scan_mu_, so the fast path
  // goes on while a rescan reads thousands of files.
  absl::Mutex scan_mu_;
  Scanner scanner_ ABSL_GUARDED_BY(scan_mu_);
  absl::Mutex health_mu_ ABSL_ACQUIRED_AFTER(scan_mu_);
  HealthProbe probe_ ABSL_GUARDED_BY(health_mu_);
  std::map<int, Track> tracks_ ABSL_GUARDED_BY(health_mu_);
  mutable absl::Mutex mu_ ABSL_ACQUIRED_AFTER(health_mu_);
  bool first_ ABSL_GUARDED_BY(mu_) = true;
  Inventory current_ ABSL_GUARDED_BY(mu_);
  std::vector<std::function<void(const Inventory&)>> subscribers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace neuron::inventory
