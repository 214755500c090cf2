#include "lib/inventory/emulation.h"

namespace neuron::inventory {
absl::StatusOr<sysfs::EmulationSpec> BuildEmulationSpec(const topology::Shape&, int) {
  return absl::UnimplementedError("todo");
}
absl::StatusOr<std::string> PrepareEmulation(const std::string&, const std::string&, int) {
  return absl::UnimplementedError("todo");
}
}  // namespace neuron::inventory
