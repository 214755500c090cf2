#include "lib/inventory/inventory.h"

namespace neuron::inventory {
Scanner::Scanner(const sysfs::Fs& fs, ScanOptions opts) : fs_(fs), opts_(std::move(opts)) {}
absl::StatusOr<Inventory> Scanner::Scan(bool) { return absl::UnimplementedError("todo"); }
void Scanner::ReportError(const std::string&, const absl::Status&) { ++read_errors_; }
absl::StatusOr<Inventory> ReadInventory(const sysfs::Fs& fs, ScanOptions opts) {
  return Scanner(fs, std::move(opts)).Scan();
}
}  // namespace neuron::inventory
