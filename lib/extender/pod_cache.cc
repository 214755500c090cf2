// File: lib/extender/pod_cache.cc
#include "lib/extender/pod_cache.h"

namespace neuron::extender {

PodCache::PodCache(size_t capacity) {
  absl::MutexLock lock(&mu_);
  ring_.resize(capacity == 0 ? 1 : capacity);
}

std::optional<PodInfo> PodCache::Find(std::string_view text) const {
  absl::MutexLock lock(&mu_);
  auto it = index_.find(text);
  if (it == index_.end()) return std::nullopt;
  return ring_[it->second].pod;
}

void PodCache::Add(std::string_view text, const PodInfo& pod) {
  absl::MutexLock lock(&mu_);
  if (index_.contains(text)) return;
  Entry& e = ring_[next_];
  if (!e.text.empty()) index_.erase(std::string_view(e.text));
  e.text.assign(text.data(), text.size());
  e.pod = pod;
  if (!e.text.empty()) index_.emplace(std::string_view(e.text), next_);
  next_ = (next_ + 1) % ring_.size();
}

size_t PodCache::size() const {
  absl::MutexLock lock(&mu_);
  return index_.size();
}

}  // namespace neuron::extender
