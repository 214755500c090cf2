#include "lib/base/signals.h"

#include <pthread.h>
#include <signal.h>

#include <thread>

#include "spdlog/spdlog.h"

namespace neuron {

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
      n->Notify();
    }).detach();
    return n;
  }();
  return *shutdown;
}

}  // namespace neuron
