// File: lib/base/backoff.h
// Exponential backoff with jitter, for retrying kUnavailable operations (API calls, kubelet
// registration). Deterministic when seeded, so tests can assert on the delays.
#pragma once

#include <cstdint>

#include "absl/random/random.h"
#include "absl/time/time.h"

namespace neuron {

struct BackoffPolicy {
  absl::Duration initial = absl::Milliseconds(100);
  absl::Duration max = absl::Seconds(30);
  double multiplier = 2.0;
  // Each delay is scaled by a random factor in [1 - jitter, 1 + jitter].
  double jitter = 0.2;
};

class Backoff {
 public:
  explicit Backoff(BackoffPolicy policy = {}, uint64_t seed = 0x9e3779b97f4a7c15ULL);

  // The delay before the next attempt; grows until policy.max.
  absl::Duration Next();
  // Call after a success: the next failure starts from policy.initial again.
  void Reset();
  int attempts() const { return attempts_; }

 private:
  double NextUnit();  // uniform in [0, 1)

  BackoffPolicy policy_;
  absl::Duration current_;
  absl::InsecureBitGen gen_;  // see lib/base/random.h
  int attempts_ = 0;
};

}  // namespace neuron
