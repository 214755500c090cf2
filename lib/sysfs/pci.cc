#include "lib/sysfs/pci.h"

namespace neuron::sysfs {
absl::StatusOr<std::vector<PciDevice>> ListPciDevices(const Fs&, const PciFilter&) {
  return absl::UnimplementedError("todo");
}
absl::StatusOr<std::vector<PciDevice>> ListNeuronPciDevices(const Fs&) {
  return absl::UnimplementedError("todo");
}
std::string FormatPciAddress(int, int, int, int) { return ""; }
}  // namespace neuron::sysfs
