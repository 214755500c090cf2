// File: lib/k8s/rest_client.h
// Typed-by-ResourceRef REST calls on JSON objects (nlohmann::json) for any group/version/resource:
// get, list (paging, selectors), create, update, delete, patch (merge, JSON patch, server-side
// apply), status subresource, watch. Errors are mapped by errors.h (409 conflict -> Aborted, use
// RetryOnConflict; 410 -> IsExpired).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/base/json_prune.h"
#include "lib/k8s/resource.h"
#include "lib/k8s/transport.h"
#include "lib/k8s/watch_decoder.h"
#include "nlohmann/json.hpp"

namespace neuron::k8s {

struct ListOptions {
  std::string label_selector{};
  std::string field_selector{};
  int64_t limit = 0;  // 0 = server default (all)
  std::string continue_token{};
  std::string resource_version{};  // "" = most recent (quorum read)
  // If set, each item is parsed only as far as this describes (lib/base/json_prune.h): the
  // page is scanned, never built whole. For readers that keep a few fields of large lists.
  const JsonKeep* keep = nullptr;
};

struct ListResult {
  std::vector<nlohmann::json> items{};
  std::string resource_version{};
  std::string continue_token{};  // "" = last page
};

struct WatchOptions {
  std::string label_selector{};
  std::string field_selector{};
  std::string resource_version{};  // resume point
  bool allow_bookmarks = true;
  int timeout_seconds = 0;  // 0 = none (server default)
  // The parts of each event's object the reader needs (as ListOptions::keep): events are built
  // only that far. Must keep metadata.resourceVersion for a reflector to resume. Null: whole.
  const JsonKeep* keep = nullptr;
};

enum class PatchType { kMerge, kJsonPatch, kStrategicMerge, kApply };

struct PatchOptions {
  std::string field_manager{};  // required for kApply
  bool force = false;           // kApply only
  std::string subresource{};    // e.g. "status"
};

struct DeleteOptions {
  std::string propagation_policy{};  // "", "Orphan", "Background", "Foreground"
  std::string precondition_uid{};
  std::string precondition_resource_version{};
  std::optional<int64_t> grace_period_seconds{};
};

class RestClient {
 public:
  explicit RestClient(std::shared_ptr<Transport> transport,
                      std::string default_namespace = "default");

  const std::string& default_namespace() const { return default_namespace_; }
  Transport& transport() { return *transport_; }

  absl::StatusOr<nlohmann::json> Get(const ResourceRef& ref, const std::string& ns,
                                     const std::string& name, const std::string& subresource = "");
  // One page.
  absl::StatusOr<ListResult> List(const ResourceRef& ref, const std::string& ns,
                                  const ListOptions& opts = {});
  // Every page (opts.limit = page size); resource_version is the first page's.
  absl::StatusOr<ListResult> ListAll(const ResourceRef& ref, const std::string& ns,
                                     ListOptions opts = {});
  absl::StatusOr<nlohmann::json> Create(const ResourceRef& ref, const std::string& ns,
                                        const nlohmann::json& obj);
  // PUT; obj.metadata.resourceVersion (if set) is the optimistic-concurrency precondition.
  absl::StatusOr<nlohmann::json> Update(const ResourceRef& ref, const std::string& ns,
                                        const nlohmann::json& obj,
                                        const std::string& subresource = "");
  absl::StatusOr<nlohmann::json> UpdateStatus(const ResourceRef& ref, const std::string& ns,
                                              const nlohmann::json& obj) {
    return Update(ref, ns, obj, "status");
  }
  // POST pods/<name>/eviction (policy/v1), asked once: a 429 (the pod's PodDisruptionBudget
  // allows no disruption now) comes back as ResourceExhausted with the server's message, for
  // the caller to ask again later; never retried here.
  absl::Status Evict(const std::string& ns, const std::string& name);
  // Returns the server's response body (the object with deletionTimestamp, or a Status).
  absl::StatusOr<nlohmann::json> Delete(const ResourceRef& ref, const std::string& ns,
                                        const std::string& name, const DeleteOptions& opts = {});
  absl::StatusOr<nlohmann::json> Patch(const ResourceRef& ref, const std::string& ns,
                                       const std::string& name, PatchType type,
                                       const nlohmann::json& patch, const PatchOptions& opts = {});
  // Server-side apply of `obj` (must carry apiVersion, kind, metadata.name).
  absl::StatusOr<nlohmann::json> Apply(const ResourceRef& ref, const std::string& ns,
                                       const nlohmann::json& obj, const std::string& field_manager,
                                       bool force = false, const std::string& subresource = "");

  // One watch stream. `on_event` gets ADDED/MODIFIED/DELETED/BOOKMARK events (return false to
  // stop); ERROR events end the stream with their status (410 -> IsExpired). Returns OK on a
  // clean end of stream (server timeout) or when stopped by on_event/cancel.
  absl::Status Watch(const ResourceRef& ref, const std::string& ns, const WatchOptions& opts,
                     const std::function<bool(WatchEvent&)>& on_event,
                     StreamCanceller* cancel = nullptr);

  // Raw request to an absolute path (discovery etc.); non-2xx -> mapped error.
  absl::StatusOr<nlohmann::json> GetPath(const std::string& path);

 private:
  absl::StatusOr<ListResult> ListPruned(const std::string& path, const JsonKeep& keep);
  absl::StatusOr<nlohmann::json> Call(const HttpRequest& req);

  std::shared_ptr<Transport> transport_{};
  std::string default_namespace_{};
};

// Runs `fn` until it returns something other than a conflict (IsConflict), at most `attempts`
// times. `fn` must re-read the object each time.
absl::Status RetryOnConflict(const std::function<absl::Status()>& fn, int attempts = 5);

// GET the object, apply `mutate` to it, PUT it; on 409 repeat. `mutate` may return an error to
// abort. Returns the stored object.
absl::StatusOr<nlohmann::json> UpdateWithRetry(
    RestClient& client, const ResourceRef& ref, const std::string& ns, const std::string& name,
    const std::function<absl::Status(nlohmann::json&)>& mutate, const std::string& subresource = "",
    int attempts = 5);

}  // namespace neuron::k8s
