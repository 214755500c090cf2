// File: lib/k8s/store.h
// Thread-safe object cache keyed "namespace/name" (or "name" for cluster-scoped objects) with
// secondary indexes (e.g. pods by spec.nodeName). Objects are immutable once stored and shared
// (std::shared_ptr<const json>), so readers never copy or race with writers.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "nlohmann/json.hpp"

namespace neuron::k8s {

using ObjectPtr = std::shared_ptr<const nlohmann::json>;
// Index values of one object (an object may have several, or none).
using IndexFunc = std::function<std::vector<std::string>(const nlohmann::json&)>;

// "ns/name", or "name" when metadata.namespace is empty.
std::string ObjectKey(const nlohmann::json& obj);
// Index function for pods by node: spec.nodeName (none if unscheduled).
std::vector<std::string> IndexByNodeName(const nlohmann::json& pod);
// Index function by metadata.namespace.
std::vector<std::string> IndexByNamespace(const nlohmann::json& obj);

struct StoreDeltas {
  std::vector<ObjectPtr> added{};
  std::vector<std::pair<ObjectPtr, ObjectPtr>> updated{};  // old, new
  std::vector<ObjectPtr> deleted{};
};

class Store {
 public:
  // Must be called before objects are added (AlreadyExists if the name is taken).
  absl::Status AddIndexer(const std::string& name, IndexFunc fn);

  // Inserts or replaces; returns the previous object (null if new).
  ObjectPtr Upsert(ObjectPtr obj);
  // Removes by key; returns the removed object (null if absent).
  ObjectPtr Delete(const std::string& key);
  // Makes the store hold exactly `objs`; returns what changed. Objects whose resourceVersion is
  // unchanged are not reported as updated.
  StoreDeltas Replace(std::vector<ObjectPtr> objs);

  ObjectPtr Get(const std::string& key) const;
  std::vector<ObjectPtr> List() const;
  std::vector<std::string> Keys() const;
  std::vector<ObjectPtr> ByIndex(const std::string& index, const std::string& value) const;
  // The distinct values of an index.
  std::vector<std::string> IndexValues(const std::string& index) const;
  size_t size() const;

 private:
  void IndexLocked(const std::string& key, const nlohmann::json* old_obj,
                   const nlohmann::json* new_obj) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::unordered_map<std::string, ObjectPtr> items_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, IndexFunc> index_funcs_ ABSL_GUARDED_BY(mu_);
  // index name -> value -> keys
  std::map<std::string, std::unordered_map<std::string, std::set<std::string>>> indices_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace neuron::k8s
