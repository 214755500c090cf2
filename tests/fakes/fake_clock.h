// File: tests/fakes/fake_clock.h
// A Clock that only moves when a test advances it. SleepFor blocks until Advance() passes the
// wake-up time, so code under test that sleeps can be driven step by step without real waits.
#pragma once

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lib/base/clock.h"

namespace neuron::fakes {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::UnixEpoch() + absl::Hours(24 * 365 * 50))
      : now_(start) {}

  absl::Time Now() override {
    absl::MutexLock lock(&mu_);
    return now_;
  }

  void SleepFor(absl::Duration d) override {
    absl::MutexLock lock(&mu_);
    const absl::Time wake = now_ + d;
    ++sleepers_;
    auto reached = [this, wake]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return now_ >= wake; };
    mu_.Await(absl::Condition(&reached));
    --sleepers_;
  }

  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }

  // How many threads are blocked in SleepFor; lets a test wait until code reached its sleep.
  int sleepers() {
    absl::MutexLock lock(&mu_);
    return sleepers_;
  }

 private:
  absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  int sleepers_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace neuron::fakes
