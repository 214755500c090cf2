// File: lib/sysfs/emulator_faults.cc
// Fault injection into emulated trees (sysfs::emulation, see emulator.h).
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/sysfs/emulator.h"
#include "lib/sysfs/emulator_internal.h"
#include "lib/sysfs/fs.h"
#include "lib/sysfs/neuron_driver.h"

namespace neuron::sysfs::emulation {
namespace {

namespace ei = emulator_internal;

absl::StatusOr<std::string> AttributePath(const std::string& root, int device,
                                          const std::string& relative_path) {
  auto rel = NormalizeRelative(relative_path);
  if (!rel.ok()) return rel.status();
  if (rel->empty()) return absl::InvalidArgumentError("empty attribute path");
  const std::string dev = ei::Join(root, ei::NeuronVirtualDir(device));
  std::error_code ec;
  if (!std::filesystem::is_directory(dev, ec)) {
    return absl::NotFoundError(absl::StrCat("no emulated neuron device ", device, " at ", root));
  }
  return absl::StrCat(dev, "/", EmulatedLeafPath(ei::RecordedScrambleSeed(root), *rel));
}

}  // namespace

absl::Status SetCounter(const std::string& root, int device, const std::string& relative_path,
                        uint64_t value) {
  NEURON_ASSIGN_OR_RETURN(const std::string path, AttributePath(root, device, relative_path));
  std::error_code ec;
  if (!std::filesystem::is_directory(std::filesystem::path(path).parent_path(), ec)) {
    return absl::NotFoundError(absl::StrCat("no directory for ", path));
  }
  return ei::WriteFileAtomic(path, absl::StrCat(value, "\n"));
}

absl::Status WriteAttribute(const std::string& root, int device, const std::string& relative_path,
                            const std::string& contents) {
  NEURON_ASSIGN_OR_RETURN(const std::string path, AttributePath(root, device, relative_path));
  return ei::WriteFileAtomic(path, contents);
}

absl::Status RemoveAttribute(const std::string& root, int device,
                             const std::string& relative_path) {
  NEURON_ASSIGN_OR_RETURN(const std::string path, AttributePath(root, device, relative_path));
  return ei::RemoveAll(path);
}

absl::Status RemoveDevice(const std::string& root, int device) {
  const std::string addr = EmulatedPciAddress(device);
  NEURON_RETURN_IF_ERROR(ei::RemoveNeuronDevice(root, device));
  NEURON_RETURN_IF_ERROR(ei::RemoveAll(
      ei::Join(root, absl::StrCat("sys/bus/pci/drivers/", kNeuronPciDriver, "/", addr))));
  NEURON_RETURN_IF_ERROR(ei::RemoveAll(ei::Join(root, absl::StrCat("sys/bus/pci/devices/", addr))));
  return ei::RemoveAll(ei::Join(root, ei::PciDeviceRealDir(device)));
}

absl::Status UnbindDriver(const std::string& root, int device) {
  const std::string dir = ei::Join(root, ei::PciDeviceRealDir(device));
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat("no emulated PCI function for device ", device));
  }
  NEURON_RETURN_IF_ERROR(ei::RemoveNeuronDevice(root, device));
  NEURON_RETURN_IF_ERROR(ei::RemoveAll(dir + "/driver"));
  return ei::RemoveAll(ei::Join(root, absl::StrCat("sys/bus/pci/drivers/", kNeuronPciDriver, "/",
                                                   EmulatedPciAddress(device))));
}

absl::Status RestoreDevice(const std::string& root, const EmulationSpec& spec, int device) {
  if (device < 0 || device >= spec.devices) {
    return absl::InvalidArgumentError(absl::StrCat("device ", device, " not in spec"));
  }
  ei::TreeWriter w(/*atomic=*/true);
  NEURON_RETURN_IF_ERROR(ei::WritePciFunction(w, root, spec, device, /*bound=*/true));
  return ei::WriteNeuronDevice(w, root, spec, device);
}

}  // namespace neuron::sysfs::emulation
