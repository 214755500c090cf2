// File: lib/deviceplugin/app.h
// What neuron-device-plugin runs: inventory watcher (real or emulated host), one endpoint per
// resource, the kubelet lifecycle manager, with API access the pod handshake, and an HTTP
// server for /metrics (metrics.h), /healthz and /readyz (every endpoint registered).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "lib/assignment/ids.h"
#include "lib/deviceplugin/allocator.h"
#include "lib/ultraserver/emulation.h"

namespace neuron::deviceplugin {

struct AppOptions {
  std::string plugin_dir = "/var/lib/kubelet/device-plugins";
  std::string host_root = "/";
  std::string emulate;            // instance type; "" = real hardware under host_root
  std::string emulate_dir;        // where to write the emulated tree ("" = a new temp dir)
  uint64_t emulate_scramble = 0;  // moves the emulated leaves (sysfs::EmulationSpec)
  int lnc = 0;  // --lnc (0 = env NEURON_LOGICAL_NC_CONFIG, host file, family default)
  std::string node_name;
  std::string kubeconfig;  // "" = in-cluster if available, else no API access
  std::string pod_resources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  std::vector<assignment::ResourceKind> resources = {assignment::ResourceKind::kDevice,
                                                     assignment::ResourceKind::kCore};
  CoreNumbering numbering = CoreNumbering::kContainer;
  absl::Duration poll_interval = absl::Seconds(5);          // full rescan
  absl::Duration health_interval = absl::Milliseconds(50);  // health fast path; 0 = off
  absl::Duration healthy_after = absl::Seconds(30);         // quiet period before healthy again
  absl::Duration handshake_interval = absl::Seconds(10);
  absl::Duration pod_cache_sync_timeout = absl::Seconds(2);  // startup wait, not fatal
  // host:port of /metrics, /healthz and /readyz; "" = no HTTP server. An address that cannot be
  // bound is logged, not fatal: the kubelet must keep its devices.
  std::string metrics_listen = "0.0.0.0:2112";
  // --emulate-ultraserver: the emulated host is this node of an UltraServer (needs emulate).
  std::optional<ultraserver::EmulatedNode> emulate_ultraserver = {};
};

class App {
 public:
  explicit App(AppOptions opts) : opts_(std::move(opts)) {}
  // Runs until `stop`; returns an error only for startup failures.
  absl::Status Run(absl::Notification& stop);

 private:
  AppOptions opts_;
};

}  // namespace neuron::deviceplugin
