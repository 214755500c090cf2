#include "lib/inventory/watcher.h"

namespace neuron::inventory {
Watcher::Watcher(const sysfs::Fs& fs, Clock& clock, WatcherOptions opts)
    : clock_(clock), opts_(std::move(opts)), scanner_(fs, opts_.scan) {}
bool Watcher::Poll() { return false; }
Inventory Watcher::Current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}
void Watcher::Subscribe(std::function<void(const Inventory&)> on_change) {
  absl::MutexLock lock(&mu_);
  subscribers_.push_back(std::move(on_change));
}
void Watcher::Run(absl::Notification&) {}
}  // namespace neuron::inventory
