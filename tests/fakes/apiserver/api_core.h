// File: tests/fakes/apiserver/api_core.h
// The fake apiserver's request semantics, independent of the HTTP library: routing of API paths,
// CRUD, status/binding subresources, patches, finalizers, garbage collection, lists and watches.
// One mutex guards the registry and the store; one condition variable wakes watch streams.
//
// Internally, handlers signal API errors by throwing ApiError; Handle()/StartWatch() are the one
// place that catches them and turns them into metav1.Status responses.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <istream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tests/fakes/apiserver/api_status.h"
#include "tests/fakes/apiserver/registry.h"
#include "tests/fakes/apiserver/store.h"

namespace neuron::fakes::apiserver {

struct HttpRequest {
  std::string method;
  std::string path;
  std::multimap<std::string, std::string> params;  // query parameters
  std::string content_type;
  std::string user_agent;
  std::string body;

  std::string Param(const std::string& name) const;
  bool Flag(const std::string& name) const;  // "1"/"true" (watch=1, watch=true)
};

struct HttpResponse {
  int status = 200;
  json body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string raw_body = {};  // when set, sent instead of `body` (lists built from cached dumps)
};

// A parsed resource URL.
struct ResourcePath {
  ResourceType type;
  std::string ns;  // empty for cluster-scoped or all-namespaces
  std::string name;
  std::string subresource;
  bool all_namespaces = false;

  std::string Key() const { return StoreKey(type.group, type.plural, ns, name); }
};

// Who writes, for managedFields.
struct WriteCtx {
  std::string manager;
  std::string operation = "Update";  // or "Apply"
  std::string subresource;           // "" or "status"
};

class WatchStream;

class ApiCore {
 public:
  ApiCore();
  ~ApiCore();

  // Every request except watches. Never throws.
  HttpResponse Handle(const HttpRequest& req);
  // True for GET collection requests with watch=1/true.
  bool IsWatch(const HttpRequest& req);
  // Starts a watch. On failure returns nullptr and fills *error.
  std::shared_ptr<WatchStream> StartWatch(const HttpRequest& req, HttpResponse* error);

  // Bulk-loads NDJSON objects (see preload.cc). InvalidArgument names the bad line.
  absl::Status Preload(std::istream& in);

  // Test hooks.
  void Compact(bool kill_open_watches);
  void CloseWatches();
  void Shutdown();  // ends all streams for good
  json Get(const std::string& path);
  absl::Status Put(const std::string& path, const json& object);
  int64_t ResourceVersion();
  size_t OpenWatches();
  void set_server_address(const std::string& a);
  // "group/version": see Registry::DisableGroupVersion.
  void DisableGroupVersion(const std::string& group_version);

 private:
  friend class WatchStream;

  // All below: mu_ held.
  ResourcePath ParsePath(const std::string& path, bool* is_collection);
  HttpResponse Discovery(const std::string& path);
  HttpResponse List(const ResourcePath& rp, const HttpRequest& req);
  HttpResponse GetItem(const ResourcePath& rp);
  HttpResponse Create(const ResourcePath& rp, const HttpRequest& req);
  HttpResponse Replace(const ResourcePath& rp, const HttpRequest& req);
  HttpResponse Patch(const ResourcePath& rp, const HttpRequest& req);
  HttpResponse Delete(const ResourcePath& rp, const HttpRequest& req);
  HttpResponse DeleteCollection(const ResourcePath& rp, const HttpRequest& req);
  HttpResponse Bind(const ResourcePath& rp, const HttpRequest& req);
  // POST pods/{name}/eviction (api_evict.cc).
  HttpResponse Evict(const ResourcePath& rp, const HttpRequest& req);
  // The request routing below Handle()'s lock; throws ApiError.
  HttpResponse Dispatch(const HttpRequest& req);

  // Fills server-set metadata and stores a new object (AlreadyExists if present).
  json CreateObject(const ResourcePath& rp, json obj, const WriteCtx& ctx, bool dry_run);
  // Stores `obj` as the new state of an existing object `old` (main resource or status), with
  // generation, status isolation, finalizer completion and managedFields bookkeeping.
  json UpdateObject(const ResourcePath& rp, const json& old, json obj, const WriteCtx& ctx,
                    bool dry_run);
  // Starts deletion of `key` (finalizers -> deletionTimestamp; otherwise removal + GC).
  // Returns the object as of the response.
  json DeleteObject(const std::string& key, const std::string& policy, bool* removed);
  void RemoveAndCollect(const std::string& key, const std::string& policy);
  void OnRemoved(const json& obj, const std::string& key, const std::string& policy);
  // Checks kind/apiVersion/name/namespace of a body against the URL, filling blanks.
  void CheckBody(const ResourcePath& rp, json& obj, bool need_name);
  // kube-controller-manager's root-ca-cert-publisher: every namespace holds a kube-root-ca.crt
  // ConfigMap (see controllers.cc).
  void PublishRootCa(const std::string& ns);
  const ResourceType* TypeOfObject(const json& obj) const;
  void EnsureNamespace(const std::string& ns);
  void RepublishRootCa(const std::string& removed_key);
  // kube-controller-manager's disruption controller (controllers.cc): recomputes the status of
  // every PodDisruptionBudget, writing those that changed, when the store changed since the last
  // run (or always, with `force`).
  void SyncDisruptionBudgets(bool force);
  // The status the disruption controller would write for `pdb` (its failSafe status when the
  // expected pod count cannot be computed).
  json DisruptionStatus(const json& pdb);
  // Sum of spec.replicas of the controllers of `pods` (upstream's getExpectedScale).
  absl::StatusOr<int64_t> ExpectedScale(const std::string& ns, const std::vector<json>& pods);
  // The scale of a pod's controller: {uid, replicas}, null when it is not found.
  absl::StatusOr<json> ControllerScale(const std::string& ns, const json& controller_ref);
  // The pods in `ns` the budget selects.
  absl::StatusOr<std::vector<json>> PodsOfBudget(const json& pdb);
  // For pods/eviction: the budgets whose selector matches the pod, in name order.
  std::vector<json> BudgetsOfPod(const json& pod);
  // Checks the budget allows one more disruption and records it (upstream's checkAndDecrement).
  void CheckAndDecrement(const json& pdb, const std::string& pod, bool dry_run);

  std::mutex mu_;
  std::condition_variable cv_;
  Registry registry_;
  Store store_;
  // Objects under a list prefix, as of a store revision: a paged list's remainingItemCount
  // without walking the rest of the collection on every page.
  struct PrefixCount {
    int64_t rv = -1;
    int64_t count = 0;
  };
  std::map<std::string, PrefixCount> prefix_counts_;
  std::string server_address_ = "127.0.0.1:0";
  uint64_t close_epoch_ = 0;  // CloseWatches() count
  uint64_t kill_epoch_ = 0;   // Compact(true) count
  bool shutdown_ = false;
  size_t open_watches_ = 0;
  int64_t pdb_synced_rv_ = -1;  // store revision of the last SyncDisruptionBudgets
};

// Lowercase media type without parameters ("application/merge-patch+json").
std::string MediaType(const std::string& content_type);
// A request body as an object: JSON, YAML, or protobuf for the kinds protobuf_body.cc knows.
json ParseBody(const HttpRequest& req);
// DeleteOptions.propagationPolicy (default Background); 422 for an unknown value.
std::string PropagationPolicy(const json& delete_options);

}  // namespace neuron::fakes::apiserver
