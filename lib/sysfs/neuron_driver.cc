#include "lib/sysfs/neuron_driver.h"

namespace neuron::sysfs {
std::string NeuronDeviceDir(int) { return ""; }
std::string NeuronCoreDir(int, int) { return ""; }
std::string NeuronDevNode(int) { return ""; }
static const std::vector<std::string> kEmpty;
const std::vector<std::string>& HardwareCounterNames() { return kEmpty; }
const std::vector<std::string>& HostMemCategories() { return kEmpty; }
const std::vector<std::string>& CoreStatusCounterNames() { return kEmpty; }
const std::vector<std::string>& DeviceMemCategories() { return kEmpty; }
const std::vector<std::string>& OtherInfoCounterNames() { return kEmpty; }
const std::vector<std::string>& UncorrectableErrorCounters() { return kEmpty; }
absl::StatusOr<std::vector<int>> ListNeuronDeviceIndices(const Fs&) {
  return absl::UnimplementedError("todo");
}
absl::StatusOr<std::vector<int>> ListNeuronCoreIndices(const Fs&, int) {
  return absl::UnimplementedError("todo");
}
std::map<int, std::string> MapDevicesToPci(const Fs&, const std::vector<int>&,
                                           const std::vector<PciDevice>&) {
  return {};
}
bool IsNeuronDriver(const std::string&) { return false; }
}  // namespace neuron::sysfs
