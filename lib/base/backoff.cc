#include "lib/base/backoff.h"

#include <algorithm>

namespace neuron {

Backoff::Backoff(BackoffPolicy policy, uint64_t seed)
    : policy_(policy), current_(policy.initial), state_(seed == 0 ? 1 : seed) {}

double Backoff::NextUnit() {
  // xorshift64*: tiny, fast and good enough for spreading retries.
  state_ ^= state_ >> 12;
  state_ ^= state_ << 25;
  state_ ^= state_ >> 27;
  const uint64_t r = state_ * 0x2545F4914F6CDD1DULL;
  return static_cast<double>(r >> 11) / static_cast<double>(uint64_t{1} << 53);
}

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
