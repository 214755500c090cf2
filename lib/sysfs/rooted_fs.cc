#include "lib/sysfs/fs.h"

namespace neuron::sysfs {
std::unique_ptr<Fs> MakeRootedFs(std::string) { return nullptr; }
absl::StatusOr<std::string> NormalizeRelative(const std::string&) {
  return absl::UnimplementedError("todo");
}
}  // namespace neuron::sysfs
