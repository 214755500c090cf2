// Stopping twice, from many threads, and a SIGTERM arriving while the process already stops on
// its own: none may call absl::Notification::Notify() twice (which aborts the process).
// Its own binary: ShutdownOnSignals() changes the signal mask of the whole process.
#include "lib/base/stop.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "catch2/catch.hpp"
#include "lib/base/signals.h"

namespace neuron {
namespace {

TEST_CASE("NotifyOnce notifies exactly once however many threads stop", "[stop]") {
  absl::Notification n;
  std::atomic<int> notified{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      if (NotifyOnce(n)) ++notified;
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(n.HasBeenNotified());
  CHECK(notified == 1);
  CHECK_FALSE(NotifyOnce(n));  // stopping again later is harmless too
}

TEST_CASE("SIGTERM while the process already stops on its own", "[stop]") {
  absl::Notification& stop = ShutdownOnSignals();
  REQUIRE(NotifyOnce(stop));              // an internal failure stops first...
  REQUIRE(kill(getpid(), SIGTERM) == 0);  // ...then the signal arrives
  // Real time is unavoidable here: the signal is handled on its own thread.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!ShutdownSignalHandled() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
  CHECK(ShutdownSignalHandled());
  CHECK(stop.HasBeenNotified());
  CHECK_FALSE(NotifyOnce(stop));
}

}  // namespace
}  // namespace neuron
