#include "lib/sysfs/parsers.h"

namespace neuron::sysfs {
absl::StatusOr<uint64_t> ParseU64(absl::string_view) { return absl::UnimplementedError("todo"); }
absl::StatusOr<int> ParseCoreCount(absl::string_view) { return absl::UnimplementedError("todo"); }
absl::StatusOr<std::vector<int>> ParseConnectedDevices(absl::string_view) {
  return absl::UnimplementedError("todo");
}
absl::StatusOr<PowerUtilization> ParsePowerUtilization(absl::string_view) {
  return absl::UnimplementedError("todo");
}
absl::StatusOr<uint32_t> ParseHexU32(absl::string_view) { return absl::UnimplementedError("todo"); }
absl::StatusOr<int> ParseNumaNode(absl::string_view) { return absl::UnimplementedError("todo"); }
absl::StatusOr<std::string> ParseToken(absl::string_view) {
  return absl::UnimplementedError("todo");
}
}  // namespace neuron::sysfs
