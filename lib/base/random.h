// File: lib/base/random.h
// Randomness for jitter (retry delays, watch timeouts). absl::InsecureBitGen rather than
// absl::BitGen: nothing here is secret, it is cheap to make and draw from, and a test can seed it
// to get the same delays on every run of the same build (Abseil keeps sequences stable only
// within a release).
#pragma once

#include <cstdint>
#include <random>

#include "absl/random/random.h"

namespace neuron {

// seed 0 = seeded from the OS; any other seed gives a reproducible sequence.
inline absl::InsecureBitGen MakeJitterGen(uint64_t seed) {
  if (seed == 0) return absl::InsecureBitGen();
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  return absl::InsecureBitGen(seq);
}

}  // namespace neuron
