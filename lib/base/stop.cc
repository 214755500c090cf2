#include "lib/base/stop.h"

#include <mutex>

namespace neuron {

bool NotifyOnce(absl::Notification& n) {
  // One lock for all notifications: stops are rare, and HasBeenNotified() then Notify() must not
  // interleave with another notifier. std::mutex, not absl::Mutex, so TSan sees it (Debian's
  // Abseil is not TSan-instrumented).
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (n.HasBeenNotified()) return false;
  n.Notify();
  return true;
}

}  // namespace neuron
