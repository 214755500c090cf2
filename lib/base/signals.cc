#include "lib/base/signals.h"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <thread>

#include "lib/base/stop.h"
#include "spdlog/spdlog.h"

namespace neuron {
namespace {

std::atomic<bool> signal_handled{false};

}  // namespace

absl::Notification& ShutdownOnSignals() {
  static absl::Notification* shutdown = [] {
    auto* n = new absl::Notification();
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::thread([n, set] {
      int sig = 0;
      if (sigwait(&set, &sig) == 0) {
        spdlog::info("shutdown requested signal={}", sig == SIGTERM ? "SIGTERM" : "SIGINT");
      }
      NotifyOnce(*n);  // the process may already be stopping on its own
      signal_handled = true;
    }).detach();
    return n;
  }();
  return *shutdown;
}

bool ShutdownSignalHandled() { return signal_handled.load(); }

}  // namespace neuron
