// File: lib/base/clock.h
// Time is injected, never read from globals, so tests advance a fake clock instead of sleeping
// (tests/fakes/fake_clock.h). Same shape as absl::Clock, which this Abseil does not ship yet.
#pragma once

#include "absl/time/time.h"

namespace neuron {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() = 0;
  virtual void SleepFor(absl::Duration d) = 0;

  // The process-wide wall clock.
  static Clock& Real();
};

}  // namespace neuron
