// File: lib/operator/cache_controller.h
// The compiled-model cache controller: informers over NeuronCaches (all namespaces),
// ClusterNeuronCaches and NeuronCacheNodes feed one work queue of cache keys (CacheKey). A pass
// holds kInUseFinalizer on the cache, resolves a tag to a digest (on create, on a spec change and
// every resolve_interval; an image by digest needs no registry call), refuses a digest the verify
// pin does not allow, sums the nodes' records into status (cache_status.h) and writes it only
// when it changed. A deleting cache keeps its finalizer while pods use it. Node reports are
// indexed by cache (cache_record_index.h) and debounced, so 5,000 nodes stay cheap.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lib/base/clock.h"
#include "lib/cache/cache_api.h"
#include "lib/k8s/informer.h"
#include "lib/k8s/rest_client.h"
#include "lib/k8s/work_queue.h"
#include "lib/operator/cache_record_index.h"

namespace neuron::op {

// Resolves spec.image (by tag) to its manifest digest ("sha256:..."). The real one goes to the
// registry with the cache's pull secrets; Unavailable/NotFound/PermissionDenied messages end up
// in the Resolved condition as they are.
class DigestResolver {
 public:
  virtual ~DigestResolver() = default;
  virtual absl::StatusOr<std::string> Resolve(const cache::CacheSpec& spec) = 0;
};

struct CacheControllerOptions {
  int workers = 1;
  absl::Duration resolve_interval = absl::Minutes(5);  // tags are re-resolved this often
  absl::Duration resolve_retry = absl::Seconds(15);    // first retry after a registry error
  // Node reports for one cache within this window make one pass.
  absl::Duration debounce = absl::Milliseconds(500);
  absl::Duration base_backoff = absl::Milliseconds(5);
  absl::Duration max_backoff = absl::Seconds(300);
  Clock* clock = nullptr;  // null = Clock::Real()
};

// For metrics: a cache's Ready state after a pass (nullopt: the cache is gone), a failed resolve.
struct CacheObserver {
  std::function<void(const std::string& key, std::optional<bool> ready)> on_ready;
  std::function<void(const std::string& key)> on_resolve_failure;
};

class CacheController {
 public:
  // `resolver` may be null: tags then stay unresolved (images by digest still work).
  CacheController(k8s::RestClient& client, DigestResolver* resolver,
                  CacheControllerOptions opts = {}, CacheObserver observer = {});
  ~CacheController();  // stops

  void Start();
  void Stop();
  bool synced() const;
  int64_t passes() const { return passes_.load(); }

 private:
  struct ResolveState {
    std::string uid;
    int64_t generation = 0;
    std::string image;
    absl::Time next = absl::InfinitePast();
    int failures = 0;
    // The last answer until a status write carried it (a 409 must not lose it until the next
    // resolve, minutes later).
    std::optional<ResolveOutcome> unwritten;
  };
  void OnNodeReport(const k8s::ObjectPtr& obj, bool deleted);
  // Every `debounce`, the caches node reports touched go to the queue at once. (Not AddAfter:
  // a worker already waiting on the queue would not wake for a delayed item added later.)
  void Debounce();
  void Work();
  void WaitForCaches() const;
  absl::Status Sync(const std::string& key);
  absl::Status SyncDeleting(const cache::CacheSpec& spec, const nlohmann::json& obj,
                            const CacheUsage& usage);
  std::optional<ResolveOutcome> MaybeResolve(const std::string& key, const cache::CacheSpec& spec,
                                             const nlohmann::json& status);
  // When the next pass is due for the resolve schedule (nullopt: none needed).
  std::optional<absl::Duration> NextResolveIn(const std::string& key);
  // Returns the object as stored after the patch.
  absl::StatusOr<nlohmann::json> SetFinalizer(const cache::CacheSpec& spec,
                                              const nlohmann::json& obj, bool held);
  // Merge-patches status with resourceVersion `rv` as precondition: a pass that read a stale
  // copy gets a 409 and runs again on the newer one, instead of writing old conditions back.
  absl::Status WriteStatus(const cache::CacheSpec& spec, const std::string& rv,
                           const nlohmann::json& status);
  const k8s::Informer* InformerFor(const std::string& kind) const;

  k8s::RestClient& client_;
  DigestResolver* resolver_;
  const CacheControllerOptions opts_;
  CacheObserver observer_;
  Clock& clock_;
  k8s::WorkQueue queue_;
  CacheRecordIndex index_;
  std::unique_ptr<k8s::Informer> caches_, cluster_caches_, nodes_;
  absl::Mutex mu_;
  std::map<std::string, ResolveState> resolve_ ABSL_GUARDED_BY(mu_);
  absl::Mutex pending_mu_;
  std::set<std::string> pending_ ABSL_GUARDED_BY(pending_mu_);
  bool stopping_ ABSL_GUARDED_BY(pending_mu_) = false;
  std::thread debouncer_;
  std::vector<std::thread> workers_;
  std::atomic<int64_t> passes_{0};
  bool started_ = false;
};

}  // namespace neuron::op
