// File: tests/fakes/apiserver/store.cc
#include "tests/fakes/apiserver/store.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace neuron::fakes::apiserver {
namespace {
// Bound on retained history. Older events are dropped and the compaction point moves up, as
// etcd's periodic compaction would (upstream keeps ~5 minutes; we keep a count).
constexpr size_t kMaxHistory = 100000;
}  // namespace

std::string StoreKey(const std::string& group, const std::string& plural, const std::string& ns,
                     const std::string& name) {
  return absl::StrCat(group, "/", plural, "/", ns, "/", name);
}

std::string StorePrefix(const std::string& group, const std::string& plural, const std::string& ns,
                        bool all_namespaces) {
  if (all_namespaces) return absl::StrCat(group, "/", plural, "/");
  return absl::StrCat(group, "/", plural, "/", ns, "/");
}

const json* Store::Find(const std::string& key) const {
  auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : &it->second;
}

const json& Store::Put(const std::string& key, json object) {
  ++rv_;
  object["metadata"]["resourceVersion"] = std::to_string(rv_);
  auto it = objects_.find(key);
  Event e{rv_, it == objects_.end() ? "ADDED" : "MODIFIED", key, object,
          it == objects_.end() ? json(nullptr) : it->second};
  const json& stored = (objects_[key] = std::move(object));
  dumps_.erase(key);
  Append(std::move(e));
  return stored;
}

void Store::Load(const std::string& key, json object) {
  ++rv_;
  object["metadata"]["resourceVersion"] = std::to_string(rv_);
  objects_[key] = std::move(object);
  dumps_.erase(key);
  compacted_rv_ = rv_;
}

const std::string& Store::Serialized(const std::string& key, const std::string& api_version,
                                     const std::string& kind) const {
  CachedDump& d = dumps_[key];
  if (d.text.empty() || d.api_version != api_version) {
    json obj = objects_.at(key);
    obj["apiVersion"] = api_version;
    obj["kind"] = kind;
    d.api_version = api_version;
    d.text = obj.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  return d.text;
}

json Store::Remove(const std::string& key) {
  auto it = objects_.find(key);
  if (it == objects_.end()) return nullptr;
  json obj = std::move(it->second);
  objects_.erase(it);
  dumps_.erase(key);
  ++rv_;
  json prev = obj;
  // Upstream's DELETED event carries the object at the deletion revision.
  obj["metadata"]["resourceVersion"] = std::to_string(rv_);
  Append(Event{rv_, "DELETED", key, obj, std::move(prev)});
  return obj;
}

void Store::Append(Event e) {
  history_.push_back(std::move(e));
  while (history_.size() > kMaxHistory) {
    compacted_rv_ = history_.front().rv;
    history_.pop_front();
    ++history_base_;
  }
}

std::vector<std::pair<std::string, const json*>> Store::Scan(const std::string& prefix,
                                                             const std::string& after_key) const {
  std::vector<std::pair<std::string, const json*>> out;
  auto it = after_key.empty() ? objects_.lower_bound(prefix) : objects_.upper_bound(after_key);
  for (; it != objects_.end() && absl::StartsWith(it->first, prefix); ++it) {
    out.emplace_back(it->first, &it->second);
  }
  return out;
}

void Store::Compact() {
  // Open watches keep reading the retained history (their cursor is past the point they had
  // already sent); only new watches / continue tokens are judged against compacted_rv_.
  compacted_rv_ = rv_;
}

size_t Store::FirstEventAfter(int64_t after) const {
  auto it = std::upper_bound(history_.begin(), history_.end(), after,
                             [](int64_t v, const Event& e) { return v < e.rv; });
  return static_cast<size_t>(it - history_.begin());
}

}  // namespace neuron::fakes::apiserver
