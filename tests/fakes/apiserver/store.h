// File: tests/fakes/apiserver/store.h
// The object store: objects by key, one global resourceVersion counter (as etcd's revision), and
// the event history that watches replay. Not thread-safe: ApiCore serialises access.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "nlohmann/json.hpp"

namespace neuron::fakes::apiserver {

using json = nlohmann::json;

// Key layout: "<group>/<plural>/<namespace>/<name>" (namespace empty for cluster-scoped), so a
// list is a prefix scan and keys sort like etcd's.
std::string StoreKey(const std::string& group, const std::string& plural, const std::string& ns,
                     const std::string& name);
std::string StorePrefix(const std::string& group, const std::string& plural, const std::string& ns,
                        bool all_namespaces);

struct Event {
  int64_t rv = 0;
  std::string type;  // ADDED, MODIFIED, DELETED
  std::string key;
  json object;  // state after the event (for DELETED: last state, carrying the deletion RV)
  json prev;    // state before (null for ADDED)
};

class Store {
 public:
  const json* Find(const std::string& key) const;
  // Creates or replaces the object at key: stamps metadata.resourceVersion with the next RV and
  // appends ADDED/MODIFIED to the history. Returns the stored object.
  const json& Put(const std::string& key, json object);
  // Removes the object (no-op if absent) and appends DELETED. Returns the deleted object.
  json Remove(const std::string& key);
  // Stores an object with the next RV but no history event: bulk preloads, whose objects
  // predate every watch (a watch from an older RV gets 410, as after compaction).
  void Load(const std::string& key, json object);

  // The object at `key` serialized with `api_version` and `kind` set, cached until the object
  // changes (upstream's watch cache likewise serializes an object once for all readers).
  // Pre: `key` is stored.
  const std::string& Serialized(const std::string& key, const std::string& api_version,
                                const std::string& kind) const;

  // Objects whose key starts with prefix, in key order, starting after `after_key` if non-empty.
  std::vector<std::pair<std::string, const json*>> Scan(const std::string& prefix,
                                                        const std::string& after_key = "") const;
  // Every stored object (for GC scans).
  const std::map<std::string, json>& objects() const { return objects_; }

  int64_t rv() const { return rv_; }
  // Watches and continue tokens older than this RV get 410 Expired.
  int64_t compacted_rv() const { return compacted_rv_; }
  void Compact();
  // Index of the first history event with rv > after (history().size() if none).
  size_t FirstEventAfter(int64_t after) const;
  const std::deque<Event>& history() const { return history_; }
  // Absolute sequence number of history()[0]; stable across trimming (see Trim).
  uint64_t history_base() const { return history_base_; }

 private:
  void Append(Event e);

  struct CachedDump {
    std::string api_version;
    std::string text;
  };
  std::map<std::string, json> objects_;
  mutable std::unordered_map<std::string, CachedDump> dumps_;  // by key
  std::deque<Event> history_;
  uint64_t history_base_ = 0;
  int64_t rv_ = 1;
  int64_t compacted_rv_ = 0;
};

}  // namespace neuron::fakes::apiserver
