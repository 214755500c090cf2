// File: lib/operator/app.h
// The operator process: health (/healthz, /readyz) and metrics (reconcile count, duration,
// errors, queue depth; caches) servers, optional Lease leader election, and the Controller while
// leading, with the compiled-model cache controller beside it. Losing the lease ends Run() with an
// error (the pod restarts and campaigns again, as client-go operators do), so two replicas never
// reconcile at once.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "lib/cache/registry_client.h"
#include "lib/k8s/rest_client.h"
#include "lib/operator/cache_controller.h"
#include "lib/operator/controller.h"

namespace neuron::op {

struct AppOptions {
  std::string kubeconfig;  // "" = in-cluster
  bool leader_elect = false;
  std::string lease_name = "neuron-operator.k8s.aws";
  std::string identity;  // "" = hostname + random suffix
  // client-go's defaults; tests shorten them.
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
  std::string health_addr = ":8081";
  std::string metrics_addr = ":8080";
  ControllerOptions controller;
  // Compiled-model caches (NeuronCache, ClusterNeuronCache): their controller runs beside the
  // DeviceConfig controller while leading. The resolver turns tags into digests (null: a
  // RegistryDigestResolver over `registry`, with the operator's API client).
  bool caches = true;
  CacheControllerOptions cache_controller;
  std::shared_ptr<DigestResolver> digest_resolver;
  cache::RegistryOptions registry;
};

class App {
 public:
  explicit App(AppOptions opts, std::shared_ptr<k8s::RestClient> client = nullptr);
  ~App();

  // Starts the servers and (after winning the lease, when electing) the controller.
  absl::Status Start();
  void Stop();
  // Start, wait for `stop` or for the lease to be lost, stop. Aborted when the lease was lost.
  absl::Status Run(absl::Notification& stop);

  bool leading() const;
  bool ready() const;
  int health_port() const;
  int metrics_port() const;
  Controller* controller();
  CacheController* cache_controller();

 private:
  struct State;
  AppOptions opts_;
  std::shared_ptr<k8s::RestClient> client_;
  std::unique_ptr<State> s_;
};

}  // namespace neuron::op
