// File: lib/inventory/watcher.cc
#include "lib/inventory/watcher.h"

#include <algorithm>
#include <thread>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "lib/sysfs/device_leaves.h"
#include "lib/sysfs/neuron_driver.h"
#include "spdlog/spdlog.h"

namespace neuron::inventory {
namespace {

constexpr char kVanished[] = "vanished";
constexpr char kUnbound[] = "driver unbound";
constexpr char kEcc[] = "uncorrectable ECC error";
constexpr char kHwErrorEvent[] = "hardware error event";

const char* ReasonForCounter(const std::string& name) {
  return name == sysfs::leaf::kHwErrorEvent ? kHwErrorEvent : kEcc;
}

// Puts the k-th health counter's value where the snapshot keeps it.
void StoreCounter(Device& d, const std::string& name, uint64_t v) {
  if (name == sysfs::leaf::kHwErrorEvent) {
    d.health_status[name] = v;
  } else {
    d.hardware[name] = v;
  }
}

// What a subscriber cares about: the device set and each device's health (not counters), and
// the node's UltraServer identity.
auto Shape(const Inventory& inv) {
  std::vector<std::tuple<int, bool, bool, std::string, std::string, int>> out;
  for (const Device& d : inv.devices) {
    out.emplace_back(d.index, d.present, d.healthy, d.unhealthy_reason, d.pci_address,
                     d.core_count);
  }
  return std::make_tuple(out, inv.instance_type, inv.ultraserver);
}

int PresentCores(const Inventory& inv) {
  int n = 0;
  for (const Device& d : inv.devices) n += d.present ? d.core_count : 0;
  return n;
}

}  // namespace

Watcher::Watcher(const sysfs::Fs& fs, Clock& clock, WatcherOptions opts)
    : clock_(clock), opts_(std::move(opts)), fs_(fs), scanner_(fs, opts_.scan), probe_(fs) {}

bool Watcher::ApplyPresent(int index, Track& t, bool bound,
                           absl::FunctionRef<std::optional<uint64_t>(size_t)> counter,
                           absl::Time now, bool* counters_moved) {
  const std::vector<std::string>& names = HealthCounters();
  const char* bad = bound ? nullptr : kUnbound;
  t.last_counters.resize(names.size());
  for (size_t k = 0; k < names.size(); ++k) {
    const std::optional<uint64_t> v = counter(k);
    if (!v) continue;  // unreadable now: keep the baseline
    std::optional<uint64_t>& last = t.last_counters[k];
    if (last && *v > *last) {
      spdlog::warn("health counter rose device={} counter={} from={} to={}", index, names[k], *last,
                   *v);
      if (bad == nullptr) bad = ReasonForCounter(names[k]);
    }
    if (last != v && counters_moved != nullptr) *counters_moved = true;
    last = v;  // a decrease (counter cleared) is a new baseline
  }
  if (bad != nullptr) {
    t.last_bad = now;
    if (t.reason != bad) t.reason = bad;
  } else if (!t.driver_bad.empty()) {
    t.last_bad = now;  // stands as long as the driver says so
    if (t.reason != t.driver_bad) t.reason = t.driver_bad;
  }
  const bool healthy =
      bad == nullptr && t.driver_bad.empty() && now - t.last_bad >= opts_.healthy_after;
  const bool changed = healthy != t.healthy || !t.present || bound != t.bound;
  if (healthy != t.healthy) {
    spdlog::info("device health changed device={} healthy={} reason=\"{}\"", index, healthy,
                 healthy ? "" : t.reason);
  }
  t.healthy = healthy;
  t.present = true;
  t.bound = bound;
  t.pci_present = true;
  return changed;
}

void Watcher::ApplyDriverStatus(int index, Track& t, const Device& d, absl::Time now) {
  std::string standing;
  if (!d.unhealthy_components.empty()) {
    standing = absl::StrCat("driver reports unhealthy components: ", d.unhealthy_components);
  }
  for (const char* name : {sysfs::leaf::kHbmEccErrCount, sysfs::leaf::kSramEccErrCount}) {
    auto it = d.health_status.find(name);
    if (it == d.health_status.end()) continue;
    auto last = t.last_status.find(name);
    if (last != t.last_status.end() && it->second > last->second) {
      spdlog::warn("driver health status counter rose device={} counter={} from={} to={}", index,
                   name, last->second, it->second);
      t.last_bad = now;
      t.reason = absl::StrCat(kEcc, " (driver health status ", name, ")");
    }
    t.last_status[name] = it->second;
  }
  if (auto hb = d.health_status.find(sysfs::leaf::kHealthcheckHeartbeat);
      hb != d.health_status.end()) {
    if (t.heartbeat && *t.heartbeat != hb->second) {
      t.heartbeat_ever_moved = true;
      t.heartbeat_moved = now;
    }
    if (!t.heartbeat) t.heartbeat_moved = now;
    t.heartbeat = hb->second;
    if (standing.empty() && t.heartbeat_ever_moved &&
        now - t.heartbeat_moved >= opts_.heartbeat_timeout) {
      standing = absl::StrCat("driver health heartbeat stopped (unchanged for ",
                              absl::FormatDuration(now - t.heartbeat_moved), ")");
    }
  }
  if (standing != t.driver_bad) {
    if (standing.empty()) {
      spdlog::info("driver health status clear again device={}", index);
    } else {
      spdlog::warn("driver health status device={} reason=\"{}\"", index, standing);
    }
    t.driver_bad = std::move(standing);
  }
}

bool Watcher::ApplyGone(int index, Track& t, bool pci_present, absl::Time now) {
  const char* reason = pci_present ? kUnbound : kVanished;
  const bool changed = t.healthy || t.present || t.reason != reason;
  if (changed) {
    spdlog::warn("device gone device={} pci={} reason=\"{}\"", index, t.last_seen.pci_address,
                 reason);
    t.reason = reason;
  }
  t.healthy = false;
  t.present = false;
  t.pci_present = pci_present;
  t.last_bad = now;
  for (auto& c : t.last_counters) c.reset();  // a re-probed device starts a new baseline
  t.last_status.clear();
  t.heartbeat.reset();
  t.heartbeat_ever_moved = false;
  t.driver_bad.clear();
  return changed;
}

bool Watcher::Poll() {
  absl::MutexLock scan_lock(&scan_mu_);
  absl::StatusOr<Inventory> scanned = scanner_.Scan();
  if (!scanned.ok()) {
    spdlog::warn("inventory scan failed error=\"{}\"", std::string(scanned.status().message()));
    absl::MutexLock lock(&mu_);
    current_.read_errors = scanner_.read_errors();
    return false;
  }
  Inventory inv = *std::move(scanned);
  inv.read_errors = scanner_.read_errors();

  absl::MutexLock health_lock(&health_mu_);
  // Watch the scanned devices and the ones seen before (kept as ghosts), then judge all of them
  // on fresh reads of the health files, as the fast path does.
  std::map<int, Device> devices;
  for (Device& d : inv.devices) devices.emplace(d.index, std::move(d));
  std::vector<std::pair<int, std::string>> watched;
  for (const auto& [index, d] : devices) watched.emplace_back(index, d.pci_address);
  for (const auto& [index, t] : tracks_) {
    if (devices.count(index) == 0) watched.emplace_back(index, t.last_seen.pci_address);
  }
  std::sort(watched.begin(), watched.end());
  probe_.Reset(watched);
  const absl::Time now = clock_.Now();
  inv.devices.clear();
  for (const HealthReading& r : probe_.Read()) {
    Track& t = tracks_[r.index];
    auto it = devices.find(r.index);
    if (it != devices.end() && r.class_dir) {
      Device& d = it->second;
      if (r.has_pci) d.driver = r.driver;
      t.driver = d.driver;
      ApplyDriverStatus(r.index, t, d, now);
      ApplyPresent(
          r.index, t, !r.has_pci || r.bound, [&](size_t k) { return r.counters[k]; }, now, nullptr);
      for (size_t k = 0; k < r.counters.size(); ++k) {
        if (r.counters[k]) StoreCounter(d, HealthCounters()[k], *r.counters[k]);
      }
      d.healthy = t.healthy;
      d.unhealthy_reason = t.healthy ? "" : t.reason;
      t.last_seen = d;
      inv.devices.push_back(std::move(d));
      continue;
    }
    // Seen before and missing now (or gone since the scan): kept in the snapshot, unhealthy.
    // The PCI function is asked of sysfs, not of the scanner's PCI list: that list is re-read
    // only when the set of neuronN entries changes, and a hot-unplug removes the class device
    // and the PCI function in two steps that a poll can fall between.
    if (it != devices.end()) t.last_seen = it->second;
    const bool pci_present = r.has_pci && r.pci_present;
    ApplyGone(r.index, t, pci_present, now);
    Device ghost = t.last_seen;
    ghost.present = false;
    ghost.healthy = false;
    ghost.unhealthy_reason = t.reason;
    if (!pci_present) ghost.driver.clear();
    inv.devices.push_back(std::move(ghost));
  }
  inv.total_cores = PresentCores(inv);
  return Publish(std::move(inv));
}

bool Watcher::PollHealth() {
  bool reappeared = false;
  {
    absl::MutexLock health_lock(&health_mu_);
    const std::vector<HealthReading>& readings = probe_.Read();
    const absl::Time now = clock_.Now();
    bool changed = false;
    for (const HealthReading& r : readings) {
      auto it = tracks_.find(r.index);
      if (it == tracks_.end()) continue;
      Track& t = it->second;
      if (!t.present && r.class_dir) {
        reappeared = true;  // its attributes and PCI pairing need the full scan (below)
      } else if (r.class_dir) {
        if (t.driver != r.driver && r.has_pci) t.driver = r.driver;
        changed |= ApplyPresent(
            r.index, t, !r.has_pci || r.bound, [&](size_t k) { return r.counters[k]; }, now,
            &changed);
      } else {
        changed |= ApplyGone(r.index, t, r.has_pci && r.pci_present, now);
      }
    }
    if (changed) {
      // Patch the last snapshot with what the fast path saw (allocates only on a change).
      Inventory inv = Current();
      const std::vector<std::string>& names = HealthCounters();
      for (Device& d : inv.devices) {
        auto it = tracks_.find(d.index);
        if (it == tracks_.end()) continue;
        const Track& t = it->second;
        d.present = t.present;
        d.healthy = t.healthy;
        d.unhealthy_reason = t.healthy ? "" : t.reason;
        if (t.present) {
          for (size_t k = 0; k < names.size() && k < t.last_counters.size(); ++k) {
            if (t.last_counters[k]) StoreCounter(d, names[k], *t.last_counters[k]);
          }
          if (!d.pci_address.empty()) d.driver = t.driver;
        } else if (!t.pci_present) {
          d.driver.clear();
        }
      }
      inv.total_cores = PresentCores(inv);
      Publish(std::move(inv));
    }
    if (!reappeared) return changed;
  }
  spdlog::info("device reappeared, rescanning");
  Poll();
  return true;
}

bool Watcher::Publish(const Inventory& inv) {
  bool changed;
  std::vector<std::function<void(const Inventory&)>> subs;
  {
    absl::MutexLock lock(&mu_);
    changed = first_ || Shape(current_) != Shape(inv);
    first_ = false;
    current_ = inv;
    if (changed) subs = subscribers_;
  }
  for (const auto& fn : subs) fn(inv);
  return changed;
}

Inventory Watcher::Current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

void Watcher::Subscribe(std::function<void(const Inventory&)> on_change) {
  absl::MutexLock lock(&mu_);
  subscribers_.push_back(std::move(on_change));
}

void Watcher::Run(absl::Notification& stop) {
  // The fast path gets its own thread so a rescan (tens of ms on a 16-device node) never
  // delays it.
  std::thread fast;
  if (opts_.health_interval > absl::ZeroDuration()) {
    fast = std::thread([this, &stop] {
      while (!stop.HasBeenNotified()) {
        clock_.SleepFor(opts_.health_interval);
        if (!stop.HasBeenNotified()) PollHealth();
      }
    });
  }
  // Sleeps in slices so a stop is noticed within ~1s on the real clock; with a fake clock one
  // Advance(interval) still triggers the next poll in one step.
  const absl::Duration slice = std::min(opts_.interval, absl::Seconds(1));
  while (!stop.HasBeenNotified()) {
    Poll();
    const absl::Time next = clock_.Now() + opts_.interval;
    while (!stop.HasBeenNotified() && clock_.Now() < next) {
      clock_.SleepFor(std::min(slice, next - clock_.Now()));
    }
  }
  if (fast.joinable()) fast.join();
}

}  // namespace neuron::inventory
