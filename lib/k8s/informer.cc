#include "lib/k8s/informer.h"

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace neuron::k8s {

Informer::Informer(RestClient& client, ResourceRef ref, std::string ns, ReflectorOptions opts)
    : reflector_(client, std::move(ref), std::move(ns), std::move(opts), *this) {}

Informer::~Informer() { Stop(); }

void Informer::SetFields(JsonKeep fields) { fields_ = std::move(fields); }

const JsonKeep* Informer::ListedFields() const { return fields_ ? &*fields_ : nullptr; }

absl::Status Informer::AddIndexer(const std::string& name, IndexFunc fn) {
  return store_.AddIndexer(name, std::move(fn));
}

void Informer::AddEventHandler(EventHandler h) {
  absl::MutexLock lock(&mu_);
  if (h.on_add) {
    for (const auto& obj : store_.List()) h.on_add(obj);
  }
  handlers_.push_back(std::move(h));
}

void Informer::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { reflector_.Run().IgnoreError(); });
}

void Informer::Stop() {
  reflector_.Stop();
  if (thread_.joinable()) thread_.join();
}

bool Informer::HasSynced() const {
  absl::MutexLock lock(&mu_);
  return synced_;
}

bool Informer::WaitForSync(absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto synced = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return synced_; };
  return mu_.AwaitWithTimeout(absl::Condition(&synced), timeout);
}

void Informer::OnReplace(std::vector<nlohmann::json> items, const std::string& resource_version) {
  std::vector<ObjectPtr> objs;
  objs.reserve(items.size());
  for (auto& item : items) {  // already pruned page by page
    objs.push_back(std::make_shared<const nlohmann::json>(std::move(item)));
  }
  items.clear();
  absl::MutexLock lock(&mu_);
  StoreDeltas d = store_.Replace(std::move(objs));
  spdlog::debug("informer replaced rv={} added={} updated={} deleted={}", resource_version,
                d.added.size(), d.updated.size(), d.deleted.size());
  for (const auto& h : handlers_) {
    if (h.on_delete) {
      for (const auto& o : d.deleted) h.on_delete(o);
    }
    if (h.on_add) {
      for (const auto& o : d.added) h.on_add(o);
    }
    if (h.on_update) {
      for (const auto& [o, n] : d.updated) h.on_update(o, n);
    }
  }
  synced_ = true;
}

void Informer::OnEvent(WatchEvent& ev) {
  absl::MutexLock lock(&mu_);
  if (ev.type == WatchEventType::kDeleted) {
    ObjectPtr gone = store_.Delete(ObjectKey(ev.object));
    // Deleted object unknown to us: report what the server sent (pruned as listed).
    if (!gone) gone = std::make_shared<const nlohmann::json>(std::move(ev.object));
    for (const auto& h : handlers_) {
      if (h.on_delete) h.on_delete(gone);
    }
    return;
  }
  ObjectPtr obj = std::make_shared<const nlohmann::json>(std::move(ev.object));
  ObjectPtr old = store_.Upsert(obj);
  for (const auto& h : handlers_) {
    if (old) {
      if (h.on_update) h.on_update(old, obj);
    } else if (h.on_add) {
      h.on_add(obj);
    }
  }
}

}  // namespace neuron::k8s
