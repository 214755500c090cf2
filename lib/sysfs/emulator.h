// File: lib/sysfs/emulator.h
// Emulated hosts: writes a directory tree laid out exactly as the kernel lays out sysfs for the
// PCI core and the Neuron driver, so the normal code (libpci included) runs over it unchanged.
// Faults are injected by writing into that tree with the helpers in sysfs::emulation.
//
//   EmulationSpec spec{.instance_type = "trn1.32xlarge", .pci_device_id = 0x7164,
//                      .devices = 16, .cores_per_device = 2, .links = ..., .numa_nodes = 2};
//   auto addrs = WriteEmulatedTree("/tmp/host", spec);       // then --host-root=/tmp/host
//   emulation::SetCounter("/tmp/host", 3, "stats/hardware/mem_ecc_uncorrected", 1);
//   emulation::UnbindDriver("/tmp/host", 5);
//
// What is written for device i (address from EmulatedPciAddress(i), e.g. "0000:10:1c.0"):
//   sys/devices/pci0000:BB/<addr>/{vendor,device,subsystem_vendor,subsystem_device,class,
//       revision,numa_node,irq,resource,config,local_cpulist,enable,modalias,uevent}
//       and driver -> ../../../bus/pci/drivers/neuron-driver
//   sys/bus/pci/devices/<addr> -> ../../../devices/pci0000:BB/<addr>
//   sys/bus/pci/drivers/neuron-driver/<addr> -> ../../../../devices/pci0000:BB/<addr>
//   sys/devices/virtual/neuron_device/neuronI/... every attribute and counter of NEURON.md §5
//       as driver 2.30.2 publishes them (health_status included), one neuron_coreM per
//       PHYSICAL core; with spec.scramble_seed the device-level leaves (device_leaves.h) are
//       moved to other directories of the device, as a driver with an unknown layout would
//   sys/class/neuron_device/neuronI -> ../../devices/virtual/neuron_device/neuronI
//   sys/class/neuron_device/{ultraserver_mode, server_id_{2,4}, node_id_{2,4}} (class_attributes)
//   dev/neuronI (placeholder regular file)
//   opt/aws/neuron/logical_nc_config when spec.lnc > 0
//   sys/devices/virtual/dmi/id/{sys_vendor,product_name} ("Amazon EC2", the instance type), as
//       EC2 Nitro hosts publish them.
// The class device has no `device` link, as with the real driver (see neuron_driver.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace neuron::sysfs {

struct EmulationSpec {  // built from a topology::Shape by inventory (or by tests)
  std::string instance_type = {};
  uint16_t pci_device_id = 0;
  int devices = 0;
  int cores_per_device = 0;  // PHYSICAL cores, as the driver's core_count reports them
  std::vector<std::vector<int>> links = {};
  int numa_nodes = 1;
  // 0: driver 2.30.2's layout. Otherwise every device-level leaf (device_leaves.h) is put in a
  // directory chosen from this seed (the same for every device), so a reader that finds leaves
  // by name can be checked against a layout it was never told about.
  uint64_t scramble_seed = 0;
  // The driver is blind to LNC; the runtime reads it from the host. > 0 writes
  // opt/aws/neuron/logical_nc_config ("NEURON_LOGICAL_NC_CONFIG=<lnc>"), as EKS user data does;
  // 0 writes no file (the family default applies).
  int lnc = 0;
  // Files of sys/class/neuron_device/ besides the device links (name -> contents): an
  // UltraServer node's identity (lib/ultraserver/emulation.h). Empty: the driver's values for a
  // node outside any UltraServer (empty mode list, zero server ids, node ids -1).
  std::map<std::string, std::string> class_attributes = {};
};

// Writes the tree under `root` (created if missing; an existing emulated tree is replaced).
// Returns the PCI address of each device in index order.
//   InvalidArgument  inconsistent spec (devices < 0, links.size() != devices, bad link index...)
//   Unavailable      I/O failure while writing
absl::StatusOr<std::vector<std::string>> WriteEmulatedTree(const std::string& root,
                                                           const EmulationSpec& spec);

// An upper estimate of the bytes the tree takes on a tmpfs (one page per non-empty file): about
// 60 files per device plus 100 per core (rounded up); measured trn2.48xlarge (16 x 8 cores) 13,657
// files = 54 MiB with 4 KiB pages, trn1.32xlarge (16 x 2) 4,036 files = 16 MiB. Inline so the
// operator can size an emptyDir without linking this module.
inline uint64_t EmulatedTreeBytes(int devices, int cores_per_device, uint64_t page_size = 4096) {
  if (devices <= 0) return 16 * page_size;
  return static_cast<uint64_t>(devices) *
         (80 + 112 * static_cast<uint64_t>(std::max(cores_per_device, 1))) * page_size;
}

// The address WriteEmulatedTree gives device `index`: sorted address order == index order.
std::string EmulatedPciAddress(int index);

// Where a tree written with `scramble_seed` puts the leaf that driver 2.30.2 has at
// `known_rel` (a path below neuronN/, or below a leaf directory such as host_mem). Paths of no
// leaf come back unchanged.
std::string EmulatedLeafPath(uint64_t scramble_seed, const std::string& known_rel);

namespace emulation {

// Writes `value` + "\n" to sys/devices/virtual/neuron_device/neuron<device>/<relative_path>,
// e.g. "stats/hardware/mem_ecc_uncorrected" or "neuron_core0/stats/status/failure/total".
// Relative paths are given as driver 2.30.2 places them and mapped to where the tree put them
// (its scramble seed is recorded in the tree), so fault injection reads the same either way.
// NotFound if the device (or the file's directory) does not exist.
absl::Status SetCounter(const std::string& root, int device, const std::string& relative_path,
                        uint64_t value);
// Writes raw bytes to such a file (garbled values, empty files, ...). Creates it if missing.
absl::Status WriteAttribute(const std::string& root, int device, const std::string& relative_path,
                            const std::string& contents);
// Deletes one attribute file (as if the driver stopped publishing it).
absl::Status RemoveAttribute(const std::string& root, int device, const std::string& relative_path);
// Hot-unplug: the PCI function, its bus/driver links, the neuron class device and /dev node go.
absl::Status RemoveDevice(const std::string& root, int device);
// Driver unbind: the PCI function stays (without `driver`), the neuron class device and
// /dev node go, as the driver's remove() does.
absl::Status UnbindDriver(const std::string& root, int device);
// Undoes UnbindDriver/RemoveDevice for `device` using `spec` (re-probe / hot-plug).
absl::Status RestoreDevice(const std::string& root, const EmulationSpec& spec, int device);

}  // namespace emulation
}  // namespace neuron::sysfs
