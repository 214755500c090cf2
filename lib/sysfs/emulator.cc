#include "lib/sysfs/emulator.h"

namespace neuron::sysfs {
absl::StatusOr<std::vector<std::string>> WriteEmulatedTree(const std::string&,
                                                           const EmulationSpec&) {
  return absl::UnimplementedError("todo");
}
std::string EmulatedPciAddress(int) { return ""; }
namespace emulation {
absl::Status SetCounter(const std::string&, int, const std::string&, uint64_t) {
  return absl::UnimplementedError("todo");
}
absl::Status WriteAttribute(const std::string&, int, const std::string&, const std::string&) {
  return absl::UnimplementedError("todo");
}
absl::Status RemoveAttribute(const std::string&, int, const std::string&) {
  return absl::UnimplementedError("todo");
}
absl::Status RemoveDevice(const std::string&, int) { return absl::UnimplementedError("todo"); }
absl::Status UnbindDriver(const std::string&, int) { return absl::UnimplementedError("todo"); }
absl::Status RestoreDevice(const std::string&, const EmulationSpec&, int) {
  return absl::UnimplementedError("todo");
}
}  // namespace emulation
}  // namespace neuron::sysfs
