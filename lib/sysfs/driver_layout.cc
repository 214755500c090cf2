// File: lib/sysfs/driver_layout.cc
#include "lib/sysfs/driver_layout.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/sysfs/neuron_driver.h"

namespace neuron::sysfs {
namespace {

struct Row {
  DeviceAttr attr;
  const char* legacy;
  const char* current;  // UNVERIFIED column, see driver_layout.h
};

// The one place that knows where each moved node lives.
constexpr Row kTable[] = {
    {DeviceAttr::kCoreCount, "core_count", "info/core_count"},
    {DeviceAttr::kConnectedDevices, "connected_devices", "info/connected_devices"},
    {DeviceAttr::kHardwareDir, "stats/hardware", "stats/device/hardware"},
    {DeviceAttr::kHostMemDir, "stats/memory_usage/host_mem", "stats/device/memory_usage/host_mem"},
    {DeviceAttr::kPowerUtilization, "stats/power/utilization", "stats/device/power/utilization"},
};

}  // namespace

std::string DriverLayoutName(DriverLayout layout) {
  return layout == DriverLayout::kLegacy ? "legacy" : "current";
}

std::optional<DriverLayout> ParseDriverLayout(absl::string_view name) {
  if (name == "legacy") return DriverLayout::kLegacy;
  if (name == "current") return DriverLayout::kCurrent;
  return std::nullopt;
}

std::string DeviceAttrRelPath(DriverLayout layout, DeviceAttr attr) {
  for (const Row& r : kTable) {
    if (r.attr == attr) return layout == DriverLayout::kLegacy ? r.legacy : r.current;
  }
  return "";
}

std::string DeviceAttrPath(DriverLayout layout, int index, DeviceAttr attr) {
  return absl::StrCat(NeuronDeviceDir(index), "/", DeviceAttrRelPath(layout, attr));
}

std::string TranslateLegacyRelPath(DriverLayout layout, const std::string& legacy_rel) {
  if (layout == DriverLayout::kLegacy) return legacy_rel;
  for (const Row& r : kTable) {
    const absl::string_view from = r.legacy;
    if (legacy_rel == from) return r.current;
    if (absl::StartsWith(legacy_rel, absl::StrCat(from, "/"))) {
      return absl::StrCat(r.current, legacy_rel.substr(from.size()));
    }
  }
  return legacy_rel;
}

std::optional<DriverLayout> DetectDriverLayout(const Fs& fs, int index) {
  for (DriverLayout l : {DriverLayout::kCurrent, DriverLayout::kLegacy}) {
    if (fs.Exists(DeviceAttrPath(l, index, DeviceAttr::kCoreCount))) return l;
  }
  return std::nullopt;
}

std::vector<std::string> UncorrectableErrorCounterPaths(const Fs& fs, int index) {
  const DriverLayout l = DetectDriverLayout(fs, index).value_or(DriverLayout::kCurrent);
  const std::string dir = DeviceAttrPath(l, index, DeviceAttr::kHardwareDir);
  std::vector<std::string> out;
  for (const std::string& name : UncorrectableErrorCounters()) {
    out.push_back(absl::StrCat(dir, "/", name));
  }
  return out;
}

}  // namespace neuron::sysfs
