#include "lib/base/backoff.h"

#include <algorithm>

#include "absl/random/distributions.h"
#include "lib/base/random.h"

namespace neuron {

Backoff::Backoff(BackoffPolicy policy, uint64_t seed)
    : policy_(policy), current_(policy.initial), gen_(MakeJitterGen(seed == 0 ? 1 : seed)) {}

double Backoff::NextUnit() { return absl::Uniform(gen_, 0.0, 1.0); }

absl::Duration Backoff::Next() {
  ++attempts_;
  const absl::Duration base = current_;
  current_ = std::min(policy_.max, current_ * policy_.multiplier);
  const double factor = 1.0 + policy_.jitter * (2.0 * NextUnit() - 1.0);
  return std::min(policy_.max, base * factor);
}

void Backoff::Reset() {
  current_ = policy_.initial;
  attempts_ = 0;
}

}  // namespace neuron
