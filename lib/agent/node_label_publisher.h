// File: lib/agent/node_label_publisher.h
// Keeps AWS's UltraServer labels on the agent's own Node object through the API (AWS's device
// plugin labels nodes directly; NFD would need extraLabelNs for neuron.amazonaws.com). A thread
// merge-patches metadata.labels (ultraserver_labels.h) once at start and again whenever the
// desired labels change; a failed patch (no RBAC yet, API down, node not registered) is retried
// with backoff, always with the latest desired labels. Every check_interval it reads the Node
// and patches again only if someone changed or removed those labels.
//
//   NodeLabelPublisher pub(client, {.node_name = "ip-10-0-0-1"});
//   pub.Start();
//   pub.Set(inventory.ultraserver);   // from the watcher's subscriber
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "lib/base/backoff.h"
#include "lib/k8s/rest_client.h"
#include "lib/ultraserver/identity.h"
#include "nlohmann/json.hpp"

namespace neuron::agent {

struct NodeLabelPublisherOptions {
  std::string node_name;
  BackoffPolicy backoff = {absl::Seconds(1), absl::Minutes(5), 2.0, 0.2};
  absl::Duration check_interval = absl::Minutes(10);  // <= 0: never read the Node back
  std::function<void()> on_failure = {};              // called per failed patch (a metric)
};

class NodeLabelPublisher {
 public:
  NodeLabelPublisher(std::shared_ptr<k8s::RestClient> client, NodeLabelPublisherOptions opts);
  ~NodeLabelPublisher();  // Stop()
  NodeLabelPublisher(const NodeLabelPublisher&) = delete;
  NodeLabelPublisher& operator=(const NodeLabelPublisher&) = delete;

  // The identity the node's labels should show (nullopt: none of them). Never blocks on the API.
  void Set(const std::optional<ultraserver::Identity>& id) ABSL_LOCKS_EXCLUDED(mu_);
  void Start();
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);  // idempotent; an ongoing patch finishes first

  uint64_t patches() const ABSL_LOCKS_EXCLUDED(mu_);   // successful patches
  uint64_t failures() const ABSL_LOCKS_EXCLUDED(mu_);  // failed attempts

 private:
  enum class Wake { kStop, kChanged, kCheck };
  void Run() ABSL_LOCKS_EXCLUDED(mu_);
  // Waits for labels to publish (kChanged) or, once some are applied, for the next check
  // (kCheck); `patch` is then the desired one.
  Wake Next(nlohmann::json& patch, std::string& description) ABSL_LOCKS_EXCLUDED(mu_);
  // The Node's labels differ from `patch` (read failures count as no difference).
  bool Drifted(const nlohmann::json& patch) const;

  std::shared_ptr<k8s::RestClient> client_;
  NodeLabelPublisherOptions opts_;
  mutable absl::Mutex mu_;
  std::optional<nlohmann::json> desired_ ABSL_GUARDED_BY(mu_);  // nullopt until the first Set
  std::string desired_description_ ABSL_GUARDED_BY(mu_);
  std::optional<nlohmann::json> applied_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t patches_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t failures_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace neuron::agent
