// File: lib/extender/decision_memo.h
// Decisions already taken on one shared, immutable node snapshot, by request size: the same pod
// sizes are asked of the same unchanged nodes over and over (hundreds of candidates per filter).
// A hit is a scan of a few atomic keys in one cache line, without a lock; the first few distinct
// sizes get those slots, any further ones go to a locked map.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"

namespace neuron::extender {

// The outcome of a request on one node (decide.h).
struct Verdict {
  bool fits = false;
  bool unresolvable = false;
  std::string reason;    // empty when it fits
  std::string category;  // metric label: fits, unknown_node, no_neuron, shape, unhealthy,
                         // capacity, fragmented, bad_request
};

class DecisionMemo {
 public:
  DecisionMemo() = default;
  DecisionMemo(const DecisionMemo&) = delete;
  DecisionMemo& operator=(const DecisionMemo&) = delete;

  // The verdict memoised for (devices, cores), or null.
  const Verdict* FindVerdict(int64_t devices, int64_t cores) const;
  // Memoises `v` unless another thread got there first; returns the memoised one (it lives as
  // long as the memo).
  const Verdict& AddVerdict(int64_t devices, int64_t cores, Verdict v);

  // The score memoised for (devices, cores, policy), or -1.
  int FindScore(int64_t devices, int64_t cores, int policy) const;
  void AddScore(int64_t devices, int64_t cores, int policy, int score);

 private:
  static constexpr int kSlots = 8;
  // 0 = empty slot. Counts above 2^24 are refused long before (pod.h kMaxRequest).
  static uint64_t Key(int64_t devices, int64_t cores, int policy);

  mutable absl::Mutex mu_;  // serialises writers; readers of the slots take no lock
  std::array<std::atomic<uint64_t>, kSlots> verdict_keys_{};
  std::array<std::unique_ptr<const Verdict>, kSlots> verdicts_;  // written before its key
  std::map<uint64_t, std::unique_ptr<const Verdict>> more_verdicts_ ABSL_GUARDED_BY(mu_);
  std::array<std::atomic<uint64_t>, kSlots> score_keys_{};  // key << 8 | score
  std::map<uint64_t, int> more_scores_ ABSL_GUARDED_BY(mu_);
};

}  // namespace neuron::extender
