// File: lib/inventory/watcher.cc
#include "lib/inventory/watcher.h"

#include <algorithm>
#include <tuple>

#include "lib/sysfs/neuron_driver.h"
#include "spdlog/spdlog.h"

namespace neuron::inventory {
namespace {

constexpr char kVanished[] = "vanished";
constexpr char kUnbound[] = "driver unbound";
constexpr char kEcc[] = "uncorrectable ECC error";

// What a subscriber cares about: the device set and each device's health (not counters).
auto Shape(const Inventory& inv) {
  std::vector<std::tuple<int, bool, bool, std::string, std::string, int>> out;
  for (const Device& d : inv.devices) {
    out.emplace_back(d.index, d.present, d.healthy, d.unhealthy_reason, d.pci_address,
                     d.core_count);
  }
  return std::make_tuple(out, inv.instance_type);
}

}  // namespace

Watcher::Watcher(const sysfs::Fs& fs, Clock& clock, WatcherOptions opts)
    : clock_(clock), opts_(std::move(opts)), fs_(fs), scanner_(fs, opts_.scan) {}

bool Watcher::Poll() {
  absl::StatusOr<Inventory> scanned = scanner_.Scan();
  if (!scanned.ok()) {
    spdlog::warn("inventory scan failed error=\"{}\"", std::string(scanned.status().message()));
    absl::MutexLock lock(&mu_);
    current_.read_errors = scanner_.read_errors();
    return false;
  }
  Inventory inv = *std::move(scanned);
  const absl::Time now = clock_.Now();

  std::map<int, Device*> seen;
  for (Device& d : inv.devices) seen[d.index] = &d;

  for (auto& [index, d] : seen) {
    Track& t = tracks_[index];
    std::string bad;
    if (!d->pci_address.empty() && !sysfs::IsNeuronDriver(d->driver)) bad = kUnbound;
    for (const std::string& name : sysfs::UncorrectableErrorCounters()) {
      auto it = d->hardware.find(name);
      if (it == d->hardware.end()) continue;
      auto last = t.last_counters.find(name);
      if (last != t.last_counters.end() && it->second > last->second) {
        spdlog::warn("uncorrectable error counter rose device={} counter={} from={} to={}", index,
                     name, last->second, it->second);
        if (bad.empty()) bad = kEcc;
      }
      t.last_counters[name] = it->second;  // a decrease (counter cleared) is a new baseline
    }
    if (!bad.empty()) {
      t.last_bad = now;
      t.reason = bad;
    }
    const bool healthy = bad.empty() && now - t.last_bad >= opts_.healthy_after;
    if (healthy != t.healthy) {
      spdlog::info("device health changed device={} healthy={} reason=\"{}\"", index, healthy,
                   healthy ? "" : t.reason);
    }
    t.healthy = healthy;
    d->healthy = healthy;
    d->unhealthy_reason = healthy ? "" : t.reason;
    t.last_seen = *d;
  }

  // Devices seen before and missing now stay in the snapshot, unhealthy.
  for (auto& [index, t] : tracks_) {
    if (seen.count(index) != 0) continue;
    const std::string& addr = t.last_seen.pci_address;
    // Asked of sysfs on every poll, not of the scanner's PCI list: that list is re-read only
    // when the set of neuronN entries changes, and a hot-unplug removes the class device and
    // the PCI function in two steps that a poll can fall between.
    const bool pci_present = !addr.empty() && fs_.Exists("sys/bus/pci/devices/" + addr);
    const std::string reason = !addr.empty() && pci_present ? kUnbound : kVanished;
    if (t.healthy || t.reason != reason) {
      spdlog::warn("device gone device={} pci={} reason=\"{}\"", index, addr, reason);
    }
    t.healthy = false;
    t.reason = reason;
    t.last_bad = now;
    t.last_counters.clear();  // a re-probed device starts a new baseline
    Device ghost = t.last_seen;
    ghost.present = false;
    ghost.healthy = false;
    ghost.unhealthy_reason = reason;
    if (!pci_present) ghost.driver.clear();
    inv.devices.push_back(std::move(ghost));
  }
  std::sort(inv.devices.begin(), inv.devices.end(),
            [](const Device& a, const Device& b) { return a.index < b.index; });
  inv.read_errors = scanner_.read_errors();

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
}

}  // namespace neuron::inventory
