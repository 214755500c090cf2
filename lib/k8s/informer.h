// File: lib/k8s/informer.h
// A shared informer: a Reflector (list + watch) feeding a thread-safe Store with indexes, an
// optional field list (JsonKeep) that trims objects as they are parsed, on list and watch
// alike, so what is not read is never built, and event handlers. A relist (after 410)
// replaces the store and emits exactly the adds, updates and deletes that the client missed,
// so no change is lost.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lib/base/json_prune.h"
#include "lib/k8s/rest_client.h"
#include "lib/k8s/store.h"
#include "lib/k8s/watcher.h"

namespace neuron::k8s {

struct EventHandler {
  std::function<void(const ObjectPtr&)> on_add;
  std::function<void(const ObjectPtr& old_obj, const ObjectPtr& new_obj)> on_update;
  std::function<void(const ObjectPtr&)> on_delete;
};

class Informer : private ReflectorSink {
 public:
  Informer(RestClient& client, ResourceRef ref, std::string ns = "", ReflectorOptions opts = {});
  ~Informer() override;  // stops

  // Configure before Start(). `fields` must keep metadata's name, namespace and
  // resourceVersion (IdentityMetadata in lib/k8s/object_fields.h); default: whole objects.
  void SetFields(JsonKeep fields);
  absl::Status AddIndexer(const std::string& name, IndexFunc fn);
  // May be called at any time; a late handler first gets on_add for every cached object.
  // Handlers run on the informer thread, one at a time: keep them short (enqueue work).
  void AddEventHandler(EventHandler h);

  void Start();
  void Stop();  // prompt: cancels the open watch
  bool HasSynced() const;
  // Waits (real time) until the first list is in the store.
  bool WaitForSync(absl::Duration timeout) const;

  const Store& store() const { return store_; }
  Reflector& reflector() { return reflector_; }

 private:
  const JsonKeep* ListedFields() const override;
  void OnReplace(std::vector<nlohmann::json> items, const std::string& resource_version) override;
  void OnEvent(WatchEvent& ev) override;

  Store store_;
  std::optional<JsonKeep> fields_;
  Reflector reflector_;
  mutable absl::Mutex mu_;  // serialises handler calls with handler registration
  std::vector<EventHandler> handlers_ ABSL_GUARDED_BY(mu_);
  bool synced_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace neuron::k8s
