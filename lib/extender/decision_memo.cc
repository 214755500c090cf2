// File: lib/extender/decision_memo.cc
#include "lib/extender/decision_memo.h"

namespace neuron::extender {

uint64_t DecisionMemo::Key(int64_t devices, int64_t cores, int policy) {
  const auto field = [](int64_t v) { return static_cast<uint64_t>(v) & 0xFFFFFF; };
  return (field(devices) << 32 | field(cores) << 8 | static_cast<uint64_t>(policy & 0x7F)) + 1;
}

const Verdict* DecisionMemo::FindVerdict(int64_t devices, int64_t cores) const {
  const uint64_t key = Key(devices, cores, 0);
  for (int i = 0; i < kSlots; ++i) {
    const uint64_t k = verdict_keys_[i].load(std::memory_order_acquire);
    if (k == key) return verdicts_[i].get();
    if (k == 0) return nullptr;  // slots fill in order: the rest are empty too
  }
  absl::MutexLock lock(&mu_);
  auto it = more_verdicts_.find(key);
  return it == more_verdicts_.end() ? nullptr : it->second.get();
}

const Verdict& DecisionMemo::AddVerdict(int64_t devices, int64_t cores, Verdict v) {
  const uint64_t key = Key(devices, cores, 0);
  absl::MutexLock lock(&mu_);
  for (int i = 0; i < kSlots; ++i) {
    const uint64_t k = verdict_keys_[i].load(std::memory_order_relaxed);
    if (k == key) return *verdicts_[i];
    if (k != 0) continue;
    verdicts_[i] = std::make_unique<const Verdict>(std::move(v));
    verdict_keys_[i].store(key, std::memory_order_release);  // publishes verdicts_[i]
    return *verdicts_[i];
  }
  auto [it, added] = more_verdicts_.try_emplace(key);
  if (added) it->second = std::make_unique<const Verdict>(std::move(v));
  return *it->second;
}

int DecisionMemo::FindScore(int64_t devices, int64_t cores, int policy) const {
  const uint64_t key = Key(devices, cores, policy);
  for (int i = 0; i < kSlots; ++i) {
    const uint64_t k = score_keys_[i].load(std::memory_order_acquire);
    if (k >> 8 == key) return static_cast<int>(k & 0xFF);
    if (k == 0) return -1;
  }
  absl::MutexLock lock(&mu_);
  auto it = more_scores_.find(key);
  return it == more_scores_.end() ? -1 : it->second;
}

void DecisionMemo::AddScore(int64_t devices, int64_t cores, int policy, int score) {
  const uint64_t key = Key(devices, cores, policy);
  absl::MutexLock lock(&mu_);
  for (int i = 0; i < kSlots; ++i) {
    const uint64_t k = score_keys_[i].load(std::memory_order_relaxed);
    if (k >> 8 == key) return;
    if (k != 0) continue;
    score_keys_[i].store(key << 8 | static_cast<uint64_t>(score & 0xFF), std::memory_order_release);
    return;
  }
  more_scores_.emplace(key, score);
}

}  // namespace neuron::extender
