// File: lib/inventory/health_probe.cc
#include "lib/inventory/health_probe.h"

#include <algorithm>

#include "lib/sysfs/neuron_driver.h"
#include "spdlog/spdlog.h"

namespace neuron::inventory {
namespace {

// A handle, or -1 (never read) when the path is refused.
int Prepare(sysfs::FileProbe& files, const std::string& path) {
  absl::StatusOr<int> h = files.Add(path);
  if (!h.ok()) {
    spdlog::warn("health probe cannot watch path={} error=\"{}\"", path,
                 std::string(h.status().message()));
    return -1;
  }
  return *h;
}

}  // namespace

const std::vector<std::string>& HealthCounters() {
  static const auto* const k = [] {
    auto* v = new std::vector<std::string>(sysfs::UncorrectableErrorCounters());
    v->push_back(sysfs::leaf::kHwErrorEvent);
    return v;
  }();
  return *k;
}

void HealthProbe::Reset(const std::vector<std::pair<int, std::string>>& devices) {
  if (devices == devices_ && !refind_) return;
  if (refind_) {
    // Look again for what did not read: moved by a driver, or published late.
    for (size_t i = 0; i < readings_.size(); ++i) {
      for (size_t k = 0; k < readings_[i].counters.size(); ++k) {
        if (readings_[i].class_dir && !readings_[i].counters[k]) {
          leaves_.Forget(readings_[i].index, HealthCounters()[k]);
        }
      }
    }
  }
  for (const auto& [index, address] : devices_) {
    if (std::find(devices.begin(), devices.end(), std::make_pair(index, address)) ==
        devices.end()) {
      leaves_.ForgetDevice(index);
    }
  }
  refind_ = false;
  devices_ = devices;
  files_.Clear();
  handles_.clear();
  readings_.clear();
  const std::vector<std::string>& names = HealthCounters();
  for (const auto& [index, address] : devices_) {
    Files f;
    f.class_dir = Prepare(files_, sysfs::NeuronDeviceDir(index));
    if (!address.empty()) {
      const std::string pci = sysfs::PciFunctionDir(address);
      f.pci_dir = Prepare(files_, pci);
      f.driver_link = Prepare(files_, pci + "/driver");
    }
    for (const std::string& name : names) {
      const std::optional<std::string> path = leaves_.Find(index, name);
      f.counters.push_back(path ? Prepare(files_, *path) : -1);
    }
    handles_.push_back(std::move(f));
    HealthReading r;
    r.index = index;
    r.has_pci = !address.empty();
    r.counters.resize(names.size());
    readings_.push_back(std::move(r));
  }
}

const std::vector<HealthReading>& HealthProbe::Read() {
  for (size_t i = 0; i < handles_.size(); ++i) {
    const Files& f = handles_[i];
    HealthReading& r = readings_[i];
    r.bound = false;
    r.pci_present = false;
    r.driver.clear();
    if (r.has_pci && f.driver_link >= 0) {
      const absl::string_view driver = files_.LinkBasename(f.driver_link);
      r.driver.assign(driver.data(), driver.size());
      r.bound = sysfs::IsNeuronDriver(driver);
      // A readable driver link implies the function; ask for the dir only when it is not.
      r.pci_present = !driver.empty() || (f.pci_dir >= 0 && files_.Exists(f.pci_dir));
    }
    // A counter that reads proves the class dir is there: the stat is needed only otherwise
    // (each syscall here costs microseconds, 16 devices, 20 times a second).
    bool any_counter = false;
    for (size_t k = 0; k < r.counters.size(); ++k) {
      const int h = f.counters[k];
      r.counters[k] = h >= 0 ? files_.ReadU64(h) : std::nullopt;
      any_counter |= r.counters[k].has_value();
    }
    r.class_dir = any_counter || (f.class_dir >= 0 && files_.Exists(f.class_dir));
    // Only the uncorrectable counters are always published; a missing hw_error_event is an
    // older driver, not a moved node.
    for (size_t k = 0; k < sysfs::UncorrectableErrorCounters().size(); ++k) {
      if (r.class_dir && !r.counters[k]) refind_ = true;
    }
  }
  return readings_;
}

}  // namespace neuron::inventory
