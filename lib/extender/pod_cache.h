// File: lib/extender/pod_cache.h
// The embedded Pod of filter and prioritize requests, parsed once: kube-scheduler sends the same
// Pod in each call of one scheduling cycle, and building it (a JSON tree, then PodInfo) costs
// more than scanning the rest of the request. Keyed by the Pod's exact text, so a pod that
// changed in any byte is parsed anew; only successful parses are kept.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "lib/extender/pod.h"

namespace neuron::extender {

class PodCache {
 public:
  // Holds the last `capacity` distinct pods (a handful of cycles in flight at once).
  explicit PodCache(size_t capacity = 32);
  PodCache(const PodCache&) = delete;
  PodCache& operator=(const PodCache&) = delete;

  std::optional<PodInfo> Find(std::string_view text) const;
  void Add(std::string_view text, const PodInfo& pod);
  size_t size() const;

 private:
  struct Entry {
    std::string text;
    PodInfo pod;
  };
  mutable absl::Mutex mu_;
  std::vector<Entry> ring_ ABSL_GUARDED_BY(mu_);  // oldest replaced first
  size_t next_ ABSL_GUARDED_BY(mu_) = 0;
  // Views into ring_'s texts (strings are not moved while indexed: ring_ never reallocates).
  absl::flat_hash_map<std::string_view, size_t> index_ ABSL_GUARDED_BY(mu_);
};

}  // namespace neuron::extender
