// File: lib/cache/node_controller.h
// The node side of compiled-model caches, one per node (inside the node agent): watches
// NeuronCaches and ClusterNeuronCaches, decides which this node should hold (nodeSelector, the
// digest the operator resolved or the image pins), pulls and extracts them one at a time, keeps
// the store's entries (what the CSI and DRA drivers read) in step, garbage-collects images no
// cache wants and no pod uses, and reports everything on the node's NeuronCacheNode.
//
// A cache whose tag moved keeps serving its old digest on this node until the new one is
// extracted; pods given the old one show as outdated. A deleting cache is no longer given to
// new pods; its image stays while a pod uses it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "lib/base/backoff.h"
#include "lib/cache/cache_api.h"
#include "lib/cache/cache_store.h"
#include "lib/cache/node_metrics.h"
#include "lib/cache/puller.h"
#include "lib/cache/registry_client.h"
#include "lib/k8s/events.h"
#include "lib/k8s/informer.h"
#include "lib/k8s/rest_client.h"

namespace neuron::cache {

struct NodeControllerOptions {
  std::string node_name;
  std::string operator_namespace = "aws-neuron-operator";  // ClusterNeuronCache pull secrets
  PullOptions pull;
  RegistryOptions registry;
  absl::Duration resync = absl::Seconds(30);
  BackoffPolicy retry = {absl::Seconds(10), absl::Minutes(5), 2.0, 0.2};
};

class NodeController {
 public:
  // `metrics` may be null. `store` must be Init()ed and outlive the controller.
  NodeController(std::shared_ptr<k8s::RestClient> client, CacheStore& store, CacheMetrics* metrics,
                 NodeControllerOptions opts);
  ~NodeController();
  NodeController(const NodeController&) = delete;
  NodeController& operator=(const NodeController&) = delete;

  // Starts the informers and the worker thread.
  absl::Status Start();
  void Stop();  // cancels a pull in flight; idempotent
  // Something outside changed (a pod started or stopped using a cache): reconcile soon.
  void Trigger();

  // One pass over every cache (the worker runs this; tests may call it directly without Start,
  // after the informers synced, or with specs given).
  absl::Status ReconcileOnce();
  int passes() const;

 private:
  struct Retry {
    std::string digest;
    std::unique_ptr<Backoff> backoff;
    absl::Time next = absl::InfinitePast();
    bool permanent = false;
  };

  std::vector<CacheSpec> ListSpecs() const;
  nlohmann::json NodeLabels();
  // Makes `key`'s entry say `digest` is extracted, pulling it first when needed.
  void Ensure(const CacheSpec& spec, const std::string& digest);
  void Pull(const CacheSpec& spec, const CacheKey& key, const std::string& digest,
            const std::optional<CacheEntry>& current);
  CredentialLookup Credentials(const CacheSpec& spec);
  void SetEntry(const CacheKey& key, CacheEntry entry, const CacheSpec* event_for = nullptr);
  void Collect(const std::set<std::string>& keep);
  absl::Status Report();
  void Loop();
  bool Cancelled() const { return stop_.HasBeenNotified(); }

  std::shared_ptr<k8s::RestClient> client_;
  CacheStore& store_;
  CacheMetrics* metrics_;
  NodeControllerOptions opts_;
  RegistryClient registry_;
  k8s::EventRecorder events_;
  std::unique_ptr<k8s::Informer> caches_;
  std::unique_ptr<k8s::Informer> cluster_caches_;
  std::map<std::string, Retry> retries_;  // by CacheKey::ToString(); worker thread only
  std::string node_uid_;
  nlohmann::json node_labels_ = nlohmann::json::object();
  nlohmann::json last_report_;

  mutable absl::Mutex mu_;
  bool triggered_ ABSL_GUARDED_BY(mu_) = true;
  int passes_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Notification stop_;
  std::thread worker_;
};

}  // namespace neuron::cache
