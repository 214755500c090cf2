// File: lib/sysfs/driver_layout.h
// The two Neuron driver sysfs layouts, and the one table that says where each device attribute
// lives in each. Everything that reads or writes a device attribute asks here for the path.
//
// Neuron Driver 2.31 reorganized the sysfs tree and moved several nodes, not backward compatible
// (Neuron sysfs user guide, SDK 2.33: tools/neuron-sys-tools/neuron-sysfs-user-guide.rst,
// "Neuron Sysfs Filesystem Structure", Important note). kLegacy is the tree of drivers before
// 2.31 (the layout neuron_driver.h documents, verified in aws-neuron-driver 2.24 source);
// kCurrent is 2.31 and later.
//
// UNVERIFIED: the guide's list of moved nodes could not be read in full from here (only its
// opening note was reachable), so the kCurrent column of the table in driver_layout.cc is our
// best reading and must be checked against the 2.33 guide / a 2.31 driver. Only that table
// changes if it is wrong. Per-core directories (neuron_coreM/...) are the same in both.
//
// Detection is per device: `info/core_count` exists only in kCurrent, a top-level `core_count`
// only in kLegacy.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "lib/sysfs/fs.h"

namespace neuron::sysfs {

enum class DriverLayout { kLegacy, kCurrent };

// "legacy" / "current".
std::string DriverLayoutName(DriverLayout layout);
// "legacy" / "current" -> layout; anything else nullopt.
std::optional<DriverLayout> ParseDriverLayout(absl::string_view name);

// Device attributes whose place depends on the layout.
enum class DeviceAttr {
  kCoreCount,         // physical NeuronCores on the device, printed without a newline
  kConnectedDevices,  // "1, 3\n"
  kHardwareDir,       // directory of the uncorrectable/repairable error counters
  kHostMemDir,        // directory of host memory categories
  kPowerUtilization,  // "status,timestamp,min,max,avg"
};

// Path of `attr` relative to the device directory ("core_count", "info/core_count", ...).
std::string DeviceAttrRelPath(DriverLayout layout, DeviceAttr attr);
// Path of `attr` of device `index` relative to the host root.
std::string DeviceAttrPath(DriverLayout layout, int index, DeviceAttr attr);

// Maps a device-relative path written in legacy terms ("stats/hardware/mem_ecc_uncorrected")
// to `layout` (fault injection, tests). Paths the table does not move come back unchanged.
std::string TranslateLegacyRelPath(DriverLayout layout, const std::string& legacy_rel);

// The layout of device `index`: kCurrent when info/core_count exists, kLegacy when a top-level
// core_count exists, nullopt when neither does (vanished device, driver mid-probe).
std::optional<DriverLayout> DetectDriverLayout(const Fs& fs, int index);

// Host-root-relative paths of device `index`'s counters of UncorrectableErrorCounters() for the
// layout detected on that device (kCurrent if undetectable). For fast health polls that read
// only these files.
std::vector<std::string> UncorrectableErrorCounterPaths(const Fs& fs, int index);

}  // namespace neuron::sysfs
