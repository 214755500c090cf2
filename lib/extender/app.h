// File: lib/extender/app.h
// The scheduler extender process: Node and Pod list+watch feeds filling the ClusterView (rebuilt
// from the API on every start), the Binder, and the HTTP server with /filter, /prioritize,
// /preempt, /bind, /healthz, /readyz (ready once both caches have synced), /metrics and
// /debug/nodes/<name>.
// It runs as a container of the scheduler's own pod and listens on loopback: only that
// kube-scheduler can call it (kubectl port-forward, which needs pods/portforward, reaches it
// for a person). --metrics-listen optionally serves /metrics, /healthz and /readyz, and nothing
// else, on another address. With --leader-lease, a LeaderFence guards the calls.
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
  std::string listen = "127.0.0.1:12345";
  std::string metrics_listen;  // "" = /metrics on `listen` only
  std::string scheduler_name = "neuron-scheduler";
  std::string leader_lease;  // "<namespace>/<name>" of the scheduler's Lease; "" = one replica
  std::string kubeconfig;    // "" = in-cluster
  Policy policy = Policy::kBinpack;
  absl::Duration reservation_ttl = absl::Seconds(60);
  absl::Duration group_reservation_ttl = absl::Minutes(2);  // UltraServer sets (pod_group.h)
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
  int metrics_port() const;  // -1 without --metrics-listen
  ClusterView& view();

 private:
  struct State;
  absl::Status StartFence();  // with --leader-lease, before the feeds list
  absl::Status Serve();       // starts the feeds and the listeners
  AppOptions opts_;
  std::shared_ptr<k8s::RestClient> client_;
  std::unique_ptr<State> s_;
};

// An exec probe's client (the extender listens on the pod's loopback, which the kubelet's
// httpGet cannot reach): GET http://<listen><path>; OK on 200.
absl::Status ProbeLocal(const std::string& listen, const std::string& path);

// A RestClient from `kubeconfig`, or the in-cluster config when it is empty.
absl::StatusOr<std::shared_ptr<k8s::RestClient>> MakeClient(const std::string& kubeconfig);

}  // namespace neuron::extender
