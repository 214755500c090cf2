// File: lib/operator/cache_record_index.h
// The nodes' cache records (NeuronCacheNode status.caches[]) indexed by cache, so a cache's pass
// reads only its own records and a node's report touches only the caches it names: at 5,000
// nodes neither a report nor a pass walks every NeuronCacheNode. Thread-safe.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "lib/cache/cache_api.h"
#include "lib/operator/cache_status.h"

namespace neuron::op {

class CacheRecordIndex {
 public:
  // Makes `records` what node `node` reports (empty: the node reports nothing, e.g. its
  // NeuronCacheNode was deleted). Returns the keys (CacheKey) of the caches whose records on
  // this node changed, appeared or went away.
  std::vector<std::string> Update(const std::string& node,
                                  const std::vector<cache::NodeCacheRecord>& records);
  // (node, record) of every node reporting cache `key`, by node name.
  NodeRecords Records(const std::string& key) const;
  size_t NumCaches() const;

 private:
  mutable absl::Mutex mu_;
  // cache key -> node -> record
  std::unordered_map<std::string, std::map<std::string, cache::NodeCacheRecord>> by_cache_
      ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, std::vector<std::string>> keys_by_node_ ABSL_GUARDED_BY(mu_);
};

}  // namespace neuron::op
