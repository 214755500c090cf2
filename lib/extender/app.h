// File: lib/extender/app.h
// The scheduler extender process: Node and Pod list+watch feeds filling the ClusterView (rebuilt
// from the API on every start), the Binder, and the HTTP server with /filter, /prioritize,
// /preempt, /bind, /healthz, /readyz (ready once both caches have synced), /metrics and
// /debug/nodes/<name>.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "lib/extender/decide.h"
#include "lib/k8s/rest_client.h"

namespace neuron::extender {

struct AppOptions {
  std::string listen = "0.0.0.0:12345";
  std::string kubeconfig;  // "" = in-cluster
  Policy policy = Policy::kBinpack;
  absl::Duration reservation_ttl = absl::Seconds(60);
  int threads = 8;
};

class App {
 public:
  // `client` overrides the kubeconfig / in-cluster client (tests).
  explicit App(AppOptions opts, std::shared_ptr<k8s::RestClient> client = nullptr);
  ~App();  // stops

  // Builds the client, starts the feeds and the HTTP server; returns once serving.
  absl::Status Start();
  void Stop();
  // Start, wait for `stop` (SIGTERM), then stop gracefully.
  absl::Status Run(absl::Notification& stop);

  bool ready() const;
  int port() const;
  ClusterView& view();

 private:
  struct State;
  AppOptions opts_;
  std::shared_ptr<k8s::RestClient> client_;
  std::unique_ptr<State> s_;
};

// A RestClient from `kubeconfig`, or the in-cluster config when it is empty.
absl::StatusOr<std::shared_ptr<k8s::RestClient>> MakeClient(const std::string& kubeconfig);

}  // namespace neuron::extender
