// File: tests/fakes/fake_clock.h
// A Clock that only moves when a test advances it. SleepFor blocks until Advance() passes the
// wake-up time, so code under test that sleeps can be driven step by step without real waits.
// Uses std::mutex rather than absl::Mutex: Debian's Abseil is not built with TSan, so its locks
// are invisible to ThreadSanitizer, while pthread-based std::mutex is intercepted.
#pragma once

#include <condition_variable>
#include <mutex>

#include "absl/time/time.h"
#include "lib/base/clock.h"

namespace neuron::fakes {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::UnixEpoch() + absl::Hours(24 * 365 * 50))
      : now_(start) {}

  absl::Time Now() override {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }

  void SleepFor(absl::Duration d) override {
    std::unique_lock<std::mutex> lock(mu_);
    const absl::Time wake = now_ + d;
    ++sleepers_;
    advanced_.wait(lock, [&] { return now_ >= wake; });
    --sleepers_;
  }

  void Advance(absl::Duration d) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      now_ += d;
    }
    advanced_.notify_all();
  }

  // How many threads are blocked in SleepFor; lets a test wait until code reached its sleep.
  int sleepers() {
    std::lock_guard<std::mutex> lock(mu_);
    return sleepers_;
  }

 private:
  std::mutex mu_;
  std::condition_variable advanced_;
  absl::Time now_;
  int sleepers_ = 0;
};

}  // namespace neuron::fakes
