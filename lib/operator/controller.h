// File: lib/operator/controller.h
// The DeviceConfig controller: informers on DeviceConfigs, Nodes (labels and taints), and the
// DaemonSets, Deployments and KMM Modules the operator manages, all feeding one rate-limited
// work queue of DeviceConfig keys; workers run Reconciler passes (level-based: any event
// re-derives the whole desired state). Failed passes back off per key; successful ones are
// re-run every resync period.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "lib/k8s/events.h"
#include "lib/k8s/informer.h"
#include "lib/k8s/rest_client.h"
#include "lib/k8s/work_queue.h"
#include "lib/operator/reconciler.h"

namespace neuron::op {

struct ControllerOptions {
  OperatorSettings settings;
  int workers = 2;
  absl::Duration resync = absl::Minutes(10);
  absl::Duration base_backoff = absl::Milliseconds(5);
  absl::Duration max_backoff = absl::Seconds(300);
};

// Observes each pass (for metrics): key, how long, its outcome. Passes of one key never run
// concurrently (the work queue hands a key to one worker at a time).
using PassObserver = std::function<void(const std::string& key, absl::Duration took,
                                        const absl::StatusOr<ReconcileResult>& result)>;

class Controller {
 public:
  Controller(k8s::RestClient& client, ControllerOptions opts, k8s::EventRecorder* events = nullptr,
             PassObserver observer = nullptr);
  ~Controller();  // stops

  // Starts the informers and the workers; returns at once.
  void Start();
  void Stop();
  // Every informer has listed once.
  bool synced() const;
  size_t QueueDepth() const;
  // Passes run so far (tests wait on it).
  int64_t passes() const { return passes_.load(); }

 private:
  void Enqueue(const std::string& key);
  void EnqueueOwner(const k8s::ObjectPtr& obj);
  void EnqueueMatching(const nlohmann::json& labels);
  void Work();
  void WaitForCaches() const;
  absl::StatusOr<std::vector<nlohmann::json>> Nodes() const;

  k8s::RestClient& client_;
  const ControllerOptions opts_;
  PassObserver observer_;
  k8s::WorkQueue queue_;
  Reconciler reconciler_;
  std::unique_ptr<k8s::Informer> configs_, nodes_;
  std::vector<std::unique_ptr<k8s::Informer>> owned_;
  std::vector<std::thread> workers_;
  std::atomic<int64_t> passes_{0};
  bool started_ = false;
};

}  // namespace neuron::op
