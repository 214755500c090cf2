// File: lib/operator/cache_record_index.cc
#include "lib/operator/cache_record_index.h"

#include <set>

namespace neuron::op {

std::vector<std::string> CacheRecordIndex::Update(
    const std::string& node, const std::vector<cache::NodeCacheRecord>& records) {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> changed;
  std::set<std::string> now;
  for (const cache::NodeCacheRecord& r : records) {
    const std::string key = CacheKeyOf(r);
    if (!now.insert(key).second) continue;  // a node reports a cache once; keep the first
    auto& per_node = by_cache_[key];
    auto it = per_node.find(node);
    if (it != per_node.end() && it->second == r) continue;
    per_node[node] = r;
    changed.push_back(key);
  }
  std::vector<std::string>& before = keys_by_node_[node];
  for (const std::string& key : before) {
    if (now.count(key) != 0) continue;
    auto it = by_cache_.find(key);
    if (it == by_cache_.end()) continue;
    it->second.erase(node);
    if (it->second.empty()) by_cache_.erase(it);
    changed.push_back(key);
  }
  before.assign(now.begin(), now.end());
  if (before.empty()) keys_by_node_.erase(node);
  return changed;
}

NodeRecords CacheRecordIndex::Records(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  NodeRecords out;
  auto it = by_cache_.find(key);
  if (it == by_cache_.end()) return out;
  out.reserve(it->second.size());
  for (const auto& [node, r] : it->second) out.emplace_back(node, r);
  return out;
}

size_t CacheRecordIndex::NumCaches() const {
  absl::MutexLock lock(&mu_);
  return by_cache_.size();
}

}  // namespace neuron::op
