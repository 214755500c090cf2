// File: lib/dra/dra_app.h
// What neuron-device-plugin runs with --api=dra: the node process of the DRA driver
// neuron.aws.com, on the same inventory watcher as the device plugin (real sysfs or an emulated
// tree, LNC resolved the same way):
//   * ResourceSlices for the node's pool, published at start, on every inventory change (a
//     health change is on the API server within ~ one health interval plus one apply), re-synced
//     every `resync` and retried with backoff after failures (slice_sync.h);
//   * the kubelet plugin (registration + DRAPlugin v1/v1beta1) preparing claims with
//     NeuronPreparer: claims read from the API server, CDI specs under cdi_root, the checkpoint at
//     <state_dir>/checkpoint.json;
//   * /healthz, /readyz (registered with the kubelet and slices published) and /metrics.
// On stop (SIGTERM) the servers stop and both sockets are removed; the slices stay: they
// describe devices that are still there, the scheduler keeps placing pods on them across our
// restart (a rolling update), and the Node owns them, so they go with the node. Deleting them on
// every restart would make the node's devices vanish from the cluster for the restart's length.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "lib/dra/cache_mounts.h"
#include "lib/dra/kubelet_plugin.h"
#include "lib/inventory/host.h"
#include "lib/k8s/rest_client.h"

namespace neuron::dra {

inline constexpr char kDefaultStateDir[] = "/var/lib/kubelet/plugins/neuron.aws.com";

struct DraAppOptions {
  inventory::HostOptions host;              // host.node_name is the pool's name (required)
  std::string kubeconfig;                   // "" = in-cluster
  std::shared_ptr<k8s::RestClient> client;  // tests: used instead of kubeconfig when set
  KubeletPluginOptions plugin;
  std::string cdi_root = "/var/run/cdi";
  std::string state_dir = kDefaultStateDir;  // holds checkpoint.json
  bool partitionable = false;                // gate DRAPartitionableDevices
  bool device_taints = false;                // gate DRADeviceTaints
  // host:port of /metrics, /healthz and /readyz; "" = none. A failed bind is logged, not fatal.
  std::string metrics_listen = "0.0.0.0:2112";
  absl::Duration resync = absl::Minutes(10);
  std::string version;  // draDriverVersion; "" = this build's version
  // Compile caches for claims whose NeuronConfig names one (neuron_preparer.h); nullptr = not
  // enabled. Not owned; must outlive Run().
  CacheMounts* cache_mounts = nullptr;
};

class DraApp {
 public:
  explicit DraApp(DraAppOptions opts);
  // Runs until `stop`; returns an error only for startup failures (it notifies `stop` then).
  absl::Status Run(absl::Notification& stop);
  // The port /metrics is served on once Run serves it (0 before; for tests and ":0").
  int metrics_port() const { return metrics_port_.load(); }

 private:
  DraAppOptions opts_;
  std::atomic<int> metrics_port_{0};
};

}  // namespace neuron::dra
