// File: lib/sysfs/device_leaves.cc
#include "lib/sysfs/device_leaves.h"

#include <deque>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/sysfs/neuron_driver.h"
#include "spdlog/spdlog.h"

namespace neuron::sysfs {
namespace {

std::vector<DeviceLeaf> BuildLeaves() {
  // Places in driver 2.30.2 (neuron_sysfs_metrics.c, neuron_cdev.c).
  std::vector<DeviceLeaf> out = {
      {leaf::kCoreCount, "core_count", false},
      {leaf::kConnectedDevices, "connected_devices", false},
      {leaf::kNotifyDelay, "info/notify_delay", false},
      {leaf::kSerialNumber, "info/serial_number", false},
      {leaf::kArchType, "info/architecture/arch_type", false},
      {leaf::kInstanceType, "info/architecture/instance_type", false},
      {leaf::kDeviceName, "info/architecture/device_name", false},
      {leaf::kHostMem, "stats/memory_usage/host_mem", true},
      {leaf::kPowerUtilization, "stats/power/utilization", false},
      {leaf::kHbmEccErrCount, "stats/hardware/health_status/hbm_ecc_err_count", false},
      {leaf::kRepairableHbmEccErrCount, "stats/hardware/health_status/repairable_hbm_ecc_err_count",
       false},
      {leaf::kSramEccErrCount, "stats/hardware/health_status/sram_ecc_err_count", false},
      {leaf::kHwErrorEvent, "stats/hardware/health_status/hw_error_event", false},
      {leaf::kUnhealthyComponents, "stats/hardware/health_status/unhealthy_components", false},
      {leaf::kHealthcheckHeartbeat, "stats/hardware/health_status/healthcheck_heartbeat", false},
  };
  // The strings live as long as the program: HardwareCounterNames() is a leaked static.
  static const auto* const kHardwarePaths = [] {
    auto* paths = new std::vector<std::string>();
    for (const std::string& n : HardwareCounterNames()) {
      paths->push_back(absl::StrCat("stats/hardware/", n));
    }
    return paths;
  }();
  for (size_t i = 0; i < HardwareCounterNames().size(); ++i) {
    out.push_back({HardwareCounterNames()[i].c_str(), (*kHardwarePaths)[i].c_str(), false});
  }
  return out;
}

bool IsSymlink(const Fs& fs, const std::string& path) { return fs.ReadLink(path).ok(); }

}  // namespace

const std::vector<DeviceLeaf>& DeviceLeaves() {
  static const auto* const k = new std::vector<DeviceLeaf>(BuildLeaves());
  return *k;
}

const DeviceLeaf* FindDeviceLeaf(absl::string_view name) {
  for (const DeviceLeaf& l : DeviceLeaves()) {
    if (name == l.name) return &l;
  }
  return nullptr;
}

void DeviceLeafLocator::Walk(int index, DeviceState& st) const {
  st.walk.clear();
  st.walked = true;
  const std::string dev = NeuronDeviceDir(index);
  // Breadth first, so a name's shallowest place wins; entries come sorted from ListDir.
  std::deque<std::pair<std::string, int>> dirs = {{"", 0}};
  while (!dirs.empty()) {
    auto [rel, depth] = std::move(dirs.front());
    dirs.pop_front();
    auto names = fs_.ListDir(rel.empty() ? dev : absl::StrCat(dev, "/", rel));
    if (!names.ok()) continue;
    for (const std::string& n : *names) {
      if (absl::StartsWith(n, "neuron_core")) continue;  // per-core leaves are not ours
      const std::string child = rel.empty() ? n : absl::StrCat(rel, "/", n);
      const std::string full = absl::StrCat(dev, "/", child);
      if (IsSymlink(fs_, full)) continue;  // subsystem, device: out of the device
      st.walk.emplace(n, child);           // keeps the first (shallowest) place
      if (depth + 1 < kMaxLeafDepth && fs_.ListDir(full).ok()) dirs.emplace_back(child, depth + 1);
    }
  }
}

std::optional<std::string> DeviceLeafLocator::Find(int index, absl::string_view name) {
  const DeviceLeaf* l = FindDeviceLeaf(name);
  if (l == nullptr) return std::nullopt;
  const std::string dev = NeuronDeviceDir(index);
  absl::MutexLock lock(&mu_);
  DeviceState& st = devices_[index];
  if (auto it = st.found.find(name); it != st.found.end()) {
    return absl::StrCat(dev, "/", it->second);
  }
  std::string place;
  if (fs_.Exists(absl::StrCat(dev, "/", l->known))) {
    place = l->known;
  } else {
    if (!st.walked) Walk(index, st);
    auto it = st.walk.find(name);
    if (it == st.walk.end()) return std::nullopt;
    place = it->second;
    if (log_) {
      spdlog::info("sysfs node found by name device={} node={} path={} known_path={}", index,
                   l->name, place, l->known);
    }
  }
  st.found.emplace(l->name, place);
  return absl::StrCat(dev, "/", place);
}

void DeviceLeafLocator::Forget(int index, absl::string_view name) {
  absl::MutexLock lock(&mu_);
  auto it = devices_.find(index);
  if (it == devices_.end()) return;
  if (auto f = it->second.found.find(name); f != it->second.found.end()) {
    it->second.found.erase(f);
  }
  it->second.walked = false;  // the tree changed under us: the next miss walks again
}

void DeviceLeafLocator::ForgetDevice(int index) {
  absl::MutexLock lock(&mu_);
  devices_.erase(index);
}

std::map<std::string, std::string> DeviceLeafLocator::Places(int index) const {
  absl::MutexLock lock(&mu_);
  auto it = devices_.find(index);
  if (it == devices_.end()) return {};
  return {it->second.found.begin(), it->second.found.end()};
}

}  // namespace neuron::sysfs
