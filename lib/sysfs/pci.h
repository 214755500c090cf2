// File: lib/sysfs/pci.h
// PCI enumeration through libpci, pointed at <fs.root()>/sys/bus/pci ("sysfs.path"), so the
// same code reads the real bus (--host-root=/) and emulated trees.
//
// libpci's `error` callback is declared "write error message and quit" (PCI_NONRET): by default
// any failure (a device directory vanishing between scan and read, an unparsable entry name, a
// missing mandatory file) calls exit(1). pci.cc installs its own callbacks and unwinds with
// longjmp back into ListPciDevices, which returns the message as a Status instead. Consequently
// this is the only place that includes <pci/pci.h>; call it at startup or when the device set
// changes, not on every poll.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/sysfs/fs.h"

namespace neuron::sysfs {

struct PciDevice {
  std::string address = {};  // "0000:10:1c.0" (domain:bus:slot.func), as named in sysfs
  uint16_t vendor_id = 0;    // 0x1d0f for Neuron
  uint16_t device_id = 0;    // 0x7164 ...
  uint32_t class_code = 0;   // 24-bit class (base, sub, prog-if), e.g. 0x088000
  int numa_node = -1;        // -1 when the kernel reports none
  std::string driver = {};   // basename of the `driver` symlink ("neuron-driver"); "" = unbound
};

struct PciFilter {
  std::optional<uint16_t> vendor_id = std::nullopt;  // nullopt = every vendor
};

// Lists the PCI functions below <fs.root()>/sys/bus/pci that match `filter`, sorted by address.
//   NotFound     <root>/sys/bus/pci/devices does not exist (no PCI bus visible at this root)
//   Unavailable  libpci reported an error mid-scan (e.g. a device vanished); retry later
absl::StatusOr<std::vector<PciDevice>> ListPciDevices(const Fs& fs, const PciFilter& filter);

// Convenience: every Neuron function (vendor 0x1d0f).
absl::StatusOr<std::vector<PciDevice>> ListNeuronPciDevices(const Fs& fs);

// Formats a 24-bit address tuple the way the kernel names devices: "0000:10:1c.0".
std::string FormatPciAddress(int domain, int bus, int slot, int func);

}  // namespace neuron::sysfs
