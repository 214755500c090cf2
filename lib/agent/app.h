// File: lib/agent/app.h
// The node agent: keeps an inventory of the node's Neuron devices fresh, serves it as
// Prometheus metrics and JSON, and publishes node labels through NFD's local feature source;
// with API access, AWS's UltraServer labels on its own Node (node_label_publisher.h).
//
//   agent::App app(options, Clock::Real());
//   absl::Status s = app.Run(ShutdownOnSignals());
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "lib/agent/cache_side.h"
#include "lib/base/backoff.h"
#include "lib/base/clock.h"
#include "lib/k8s/rest_client.h"
#include "lib/ultraserver/emulation.h"

namespace neuron::agent {

struct AgentOptions {
  std::string host_root = "/";  // where the host's / is mounted (sysfs under it)
  std::string emulate;          // instance type to emulate; "" = real hardware
  std::string emulate_dir;      // where to write the emulated tree; "" = a temp dir
  // --lnc (1 or 2); 0 = env NEURON_LOGICAL_NC_CONFIG, the host file, the family default
  // (inventory/lnc.h). With --emulate it is also written into the emulated host's file.
  int lnc = 0;
  uint64_t emulate_scramble = 0;  // moves the emulated leaves (sysfs::EmulationSpec)
  // --emulate-ultraserver: the emulated host is this UltraServer node (needs --emulate=
  // trn2u.48xlarge; inventory::ParseEmulateUltraServerFlag).
  std::optional<ultraserver::EmulatedNode> emulate_ultraserver;
  std::string listen = "0.0.0.0:8000";
  std::string node_name;
  std::string features_dir;                    // NFD features.d; "" = do not publish labels
  absl::Duration interval = absl::Seconds(5);  // full rescan
  absl::Duration health_interval = absl::Milliseconds(50);  // health fast path; 0 = off
  absl::Duration healthy_after = absl::Seconds(30);
  // AWS's UltraServer labels on the Node named node_name, through the API. Off, without a node
  // name or without API access the agent runs without them (and says why, once).
  bool ultraserver_labels = true;
  std::string kubeconfig;  // "" = in-cluster config if available, else no API access
  std::shared_ptr<k8s::RestClient> client;  // tests: used instead of kubeconfig when set
  BackoffPolicy label_backoff = {absl::Seconds(1), absl::Minutes(5), 2.0, 0.2};
  absl::Duration label_check_interval = absl::Minutes(10);  // read back and restore if changed
  // Compiled-model caches (NeuronCache): off while cache.cache_dir is empty.
  CacheSideOptions cache;
  // The kubelet's PodResources socket, asked once per `interval` which pod holds each core
  // (neuron_core_allocation, allocation_collector.h); "" = no pod attribution.
  std::string pod_resources_socket;
};

class App {
 public:
  App(AgentOptions options, Clock& clock);
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  // Prepares emulation if asked, takes the first inventory, starts HTTP and the poll thread.
  absl::Status Start();
  // Stops polling and serving. Idempotent.
  void Stop();
  // Start(), then wait for `stop`, then Stop().
  absl::Status Run(absl::Notification& stop);

  int port() const;               // after Start()
  std::string host_root() const;  // after Start(): the emulated root in emulated mode

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace neuron::agent
