// File: lib/sysfs/neuron_driver.h
// Where the Neuron kernel driver (aws-neuron-driver) publishes devices, attributes and counters
// in sysfs, and how a /dev/neuronN index is tied to a PCI function.
//
// Layout of driver 2.30.2 and before (neuron_cdev.c, neuron_sysfs_metrics.c); later drivers move
// device-level nodes, which device_leaves.h finds by name:
//   sys/class/neuron_device/neuronN -> ../../devices/virtual/neuron_device/neuronN
//   .../neuronN/{core_count, connected_devices, reset, dev, uevent}
//   .../neuronN/info/{notify_delay, serial_number}, info/architecture/{arch_type, instance_type,
//       device_name}                         (instance_type is "Trn1"/"Inf2"/..., not an EC2 name)
//   .../neuronN/stats/hardware/<HardwareCounterNames()>              plain "%u\n" files
//   .../neuronN/stats/hardware/health_status/<device_leaves.h leaf::k...>  (2.28+, when enabled)
//   .../neuronN/stats/memory_usage/host_mem/<HostMemCategories()>/{total,present,peak}
//   .../neuronN/stats/power/utilization      "POWER_STATUS_VALID,<secs>,<min>,<max>,<avg>\n"
//   .../neuronN/neuron_coreM/info/architecture/arch_type
//   .../neuronN/neuron_coreM/stats/status/<CoreStatusCounterNames()>/{total,present}
//   .../neuronN/neuron_coreM/stats/memory_usage/{host_mem,device_mem}/{total,present,peak}
//   .../neuronN/neuron_coreM/stats/memory_usage/device_mem/<DeviceMemCategories()>/{total,...}
//   .../neuronN/neuron_coreM/stats/other_info/<OtherInfoCounterNames()>/{total,present}
// The PCI driver registers as "neuron-driver" (neuron_pci.c), so a bound function has
// sys/bus/pci/devices/<addr>/driver -> ../../../bus/pci/drivers/neuron-driver.
//
// /dev/neuronN <-> PCI address. The driver creates the class device with device_create(...,
// NULL /* no parent device */, MKDEV(major, N), ...), so sysfs has NO `device` link from
// neuronN to its PCI function. N is nd->device_index:
//   * Inferentia (v1): the probe order (atomic counter in neuron_pci_probe); the PCI core probes
//     synchronously in bus order, so N is the rank of the function's address among bound Neuron
//     functions.
//   * Trainium/Inferentia2/Trainium2 (v2, v3): the firmware routing id read from BAR0
//     (fw_io_device_id_read), remapped through a 16-entry table on trn1/trn2. It follows the
//     board wiring, not necessarily the address order.
// The exact answer is only available via ioctl NEURON_IOCTL_DEVICE_BDF on an open /dev/neuronN,
// which a monitoring agent must not do (it would hold the device open and block `reset`). So we:
//   1. use sys/class/neuron_device/neuronN/device if a kernel/driver ever provides it;
//   2. otherwise pair the sorted indices with the sorted addresses of bound Neuron functions
//      (exact on inf1 and in emulation, a documented best effort on v2/v3).
// Allocation and health key on N; the PCI address is informational (labels, logs, metrics).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/sysfs/fs.h"
#include "lib/sysfs/pci.h"

namespace neuron::sysfs {

inline constexpr char kNeuronClassDir[] = "sys/class/neuron_device";
inline constexpr char kNeuronVirtualDir[] = "sys/devices/virtual/neuron_device";
inline constexpr char kNeuronPciDriver[] = "neuron-driver";
// The loaded driver's version ("2.24.7.0"), as the kernel publishes MODULE_VERSION of neuron.ko.
inline constexpr char kNeuronModuleVersion[] = "sys/module/neuron/version";

// "sys/class/neuron_device/neuron3"
std::string NeuronDeviceDir(int index);
// "sys/class/neuron_device/neuron3/neuron_core1"
std::string NeuronCoreDir(int index, int core);
// "dev/neuron3"
std::string NeuronDevNode(int index);
// "sys/bus/pci/devices/0000:10:1c.0"; its `driver` link names the bound driver.
std::string PciFunctionDir(const std::string& address);

// Names exactly as the driver creates them (neuron_sysfs_metrics.c tables).
const std::vector<std::string>& HardwareCounterNames();    // stats/hardware/<name>
const std::vector<std::string>& HostMemCategories();       // stats/memory_usage/host_mem/<cat>/
const std::vector<std::string>& CoreStatusCounterNames();  // neuron_coreM/stats/status/<name>/
const std::vector<std::string>& DeviceMemCategories();     // .../memory_usage/device_mem/<cat>/
const std::vector<std::string>& OtherInfoCounterNames();   // neuron_coreM/stats/other_info/<name>/

// Hardware counters whose rise means the device can no longer be trusted.
const std::vector<std::string>& UncorrectableErrorCounters();

// N of every sys/class/neuron_device/neuronN entry, sorted. An absent class dir (driver not
// loaded) is an empty list, not an error; other I/O errors are returned.
absl::StatusOr<std::vector<int>> ListNeuronDeviceIndices(const Fs& fs);
// M of every neuron_coreM directory of device N, sorted.
absl::StatusOr<std::vector<int>> ListNeuronCoreIndices(const Fs& fs, int index);

// Maps device indices to PCI addresses by the rule above. `pci` should be the Neuron functions
// (any driver state); only those bound to the Neuron driver take part in rank pairing. Indices
// that cannot be paired are absent from the result.
std::map<int, std::string> MapDevicesToPci(const Fs& fs, const std::vector<int>& indices,
                                           const std::vector<PciDevice>& pci);

// True for the names the Neuron PCI driver has registered under ("neuron-driver", "neuron").
bool IsNeuronDriver(absl::string_view driver);

}  // namespace neuron::sysfs
