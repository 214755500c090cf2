// File: lib/inventory/health_probe.h
// The files device health depends on, read many times a second by the watcher's fast path:
// per device its class dir (sys/class/neuron_device/neuronN), its PCI function's `driver` link
// (and the function dir itself), and its HealthCounters(). Everything else waits for the slow
// full rescan. Reads go through sysfs::FileProbe: prepared paths, no allocation. The counters
// are found by name (sysfs/device_leaves.h); one that stops reading is looked for again at the
// next Reset (the full rescan's pace), so a moved node is followed without a walk per tick.
//
//   HealthProbe probe(fs);
//   probe.Reset({{0, "0000:10:1c.0"}, {1, ""}});
//   for (const HealthReading& r : probe.Read()) ...
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lib/sysfs/device_leaves.h"
#include "lib/sysfs/file_probe.h"
#include "lib/sysfs/fs.h"

namespace neuron::inventory {

struct HealthReading {
  int index = 0;             // N of /dev/neuronN
  bool has_pci = false;      // the device was paired with a PCI function
  bool class_dir = false;    // sys/class/neuron_device/neuronN exists
  bool pci_present = false;  // its PCI function dir exists (false without has_pci)
  bool bound = false;        // the function's driver link names the Neuron driver
  std::string driver;        // that link's last component; "" = no link (reused: no churn)
  // One per HealthCounters(), in order; nullopt = missing or garbled (and always nullopt while
  // the class dir is gone).
  std::vector<std::optional<uint64_t>> counters;
};

// The device-level leaves whose rise makes a device unhealthy: the uncorrectable ECC counters
// (sysfs::UncorrectableErrorCounters()) and the driver's hw_error_event (2.28+).
const std::vector<std::string>& HealthCounters();

class HealthProbe {
 public:
  explicit HealthProbe(const sysfs::Fs& fs) : leaves_(fs, /*log_moves=*/false), files_(fs) {}

  // Prepares the files of these devices: (index, PCI address or ""). Cheap when unchanged and
  // every counter found was readable at the last Read.
  void Reset(const std::vector<std::pair<int, std::string>>& devices);
  // Reads every prepared file once and returns the readings (updated in place: valid until
  // the next Read or Reset). Not thread-safe: one probe per polling thread.
  const std::vector<HealthReading>& Read();

 private:
  struct Files {
    int class_dir = -1, pci_dir = -1, driver_link = -1;
    std::vector<int> counters;
  };

  sysfs::DeviceLeafLocator leaves_;
  sysfs::FileProbe files_;
  bool refind_ = false;  // a counter did not read while its device was there
  std::vector<std::pair<int, std::string>> devices_;
  std::vector<Files> handles_;
  std::vector<HealthReading> readings_;
};

}  // namespace neuron::inventory
