#include "lib/k8s/store.h"

#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "lib/k8s/object_view.h"

namespace neuron::k8s {

std::string ObjectKey(const nlohmann::json& obj) { return ObjectView(obj).key(); }

std::vector<std::string> IndexByNodeName(const nlohmann::json& pod) {
  const std::string_view node = PodView(pod).node_name();
  if (node.empty()) return {};
  return {std::string(node)};
}

std::vector<std::string> IndexByNamespace(const nlohmann::json& obj) {
  const std::string_view ns = ObjectView(obj).namespace_();
  if (ns.empty()) return {};
  return {std::string(ns)};
}

absl::Status Store::AddIndexer(const std::string& name, IndexFunc fn) {
  absl::MutexLock lock(&mu_);
  if (index_funcs_.count(name)) {
    return absl::AlreadyExistsError(absl::StrCat("indexer ", name, " exists"));
  }
  if (!items_.empty()) {
    return absl::FailedPreconditionError("indexers must be added before objects");
  }
  index_funcs_[name] = std::move(fn);
  indices_[name];
  return absl::OkStatus();
}

void Store::IndexLocked(const std::string& key, const nlohmann::json* old_obj,
                        const nlohmann::json* new_obj) {
  for (const auto& [name, fn] : index_funcs_) {
    auto& index = indices_[name];
    if (old_obj) {
      for (const auto& v : fn(*old_obj)) {
        auto it = index.find(v);
        if (it == index.end()) continue;
        it->second.erase(key);
        if (it->second.empty()) index.erase(it);
      }
    }
    if (new_obj) {
      for (const auto& v : fn(*new_obj)) index[v].insert(key);
    }
  }
}

ObjectPtr Store::Upsert(ObjectPtr obj) {
  const std::string key = ObjectKey(*obj);
  absl::MutexLock lock(&mu_);
  ObjectPtr& slot = items_[key];
  ObjectPtr old = std::move(slot);
  IndexLocked(key, old.get(), obj.get());
  slot = std::move(obj);
  return old;
}

ObjectPtr Store::Delete(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return nullptr;
  ObjectPtr old = std::move(it->second);
  items_.erase(it);
  IndexLocked(key, old.get(), nullptr);
  return old;
}

StoreDeltas Store::Replace(std::vector<ObjectPtr> objs) {
  StoreDeltas d;
  absl::MutexLock lock(&mu_);
  std::unordered_set<std::string> keep;
  keep.reserve(objs.size());
  for (auto& obj : objs) {
    std::string key = ObjectKey(*obj);
    keep.insert(key);
    ObjectPtr& slot = items_[key];
    ObjectPtr old = std::move(slot);
    IndexLocked(key, old.get(), obj.get());
    if (!old) {
      d.added.push_back(obj);
    } else if (ObjectView(*old).resource_version() != ObjectView(*obj).resource_version() ||
               ObjectView(*obj).resource_version().empty()) {
      d.updated.emplace_back(old, obj);
    }
    slot = std::move(obj);
  }
  for (auto it = items_.begin(); it != items_.end();) {
    if (keep.count(it->first)) {
      ++it;
      continue;
    }
    IndexLocked(it->first, it->second.get(), nullptr);
    d.deleted.push_back(std::move(it->second));
    it = items_.erase(it);
  }
  return d;
}

ObjectPtr Store::Get(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = items_.find(key);
  return it == items_.end() ? nullptr : it->second;
}

std::vector<ObjectPtr> Store::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<ObjectPtr> out;
  out.reserve(items_.size());
  for (const auto& [k, v] : items_) out.push_back(v);
  return out;
}

std::vector<std::string> Store::Keys() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const auto& [k, v] : items_) out.push_back(k);
  return out;
}

std::vector<ObjectPtr> Store::ByIndex(const std::string& index, const std::string& value) const {
  absl::MutexLock lock(&mu_);
  std::vector<ObjectPtr> out;
  auto idx = indices_.find(index);
  if (idx == indices_.end()) return out;
  auto it = idx->second.find(value);
  if (it == idx->second.end()) return out;
  for (const auto& key : it->second) {
    if (auto obj = items_.find(key); obj != items_.end()) out.push_back(obj->second);
  }
  return out;
}

std::vector<std::string> Store::IndexValues(const std::string& index) const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> out;
  auto idx = indices_.find(index);
  if (idx == indices_.end()) return out;
  for (const auto& [v, keys] : idx->second) out.push_back(v);
  return out;
}

size_t Store::size() const {
  absl::MutexLock lock(&mu_);
  return items_.size();
}

}  // namespace neuron::k8s
