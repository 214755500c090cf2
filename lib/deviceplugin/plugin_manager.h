// File: lib/deviceplugin/plugin_manager.h
// Lifecycle of the plugin endpoints against the kubelet, as the kubelet expects it:
//   * serve every endpoint first, then Register each (kubelet.sock), retrying with backoff while
//     the kubelet is absent;
//   * a kubelet restart deletes every unix socket in the directory and re-creates kubelet.sock:
//     an inotify watch on the directory notices either event and the affected endpoints are
//     served again and re-registered at once (well under 1 s);
//   * a periodic check re-serves an endpoint whose socket vanished without an event.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "lib/base/backoff.h"
#include "lib/deviceplugin/metrics.h"
#include "lib/deviceplugin/plugin_server.h"

namespace neuron::deviceplugin {

struct ManagerOptions {
  std::string plugin_dir = "/var/lib/kubelet/device-plugins";
  std::string kubelet_socket_name = "kubelet.sock";
  BackoffPolicy backoff{absl::Milliseconds(100), absl::Seconds(5), 2.0, 0.2};
  absl::Duration register_timeout = absl::Seconds(10);
  absl::Duration check_interval = absl::Seconds(1);  // socket-present check without events
  PluginMetrics* metrics = nullptr;  // counts Register calls; may be null, must outlive Run()
};

class PluginManager {
 public:
  // `servers` are owned by the caller and must outlive Run().
  PluginManager(std::vector<PluginServer*> servers, ManagerOptions opts);

  // Serves, registers and keeps every endpoint registered until `stop` fires; then stops the
  // servers (ending ListAndWatch streams, removing the sockets) and returns. Fails only when
  // the plugin directory cannot be watched or an endpoint cannot be served at all.
  absl::Status Run(absl::Notification& stop);

  // Successful Register calls so far (all endpoints).
  int registrations() const { return registrations_.load(); }
  // True while Run() has every endpoint registered with the current kubelet.
  bool all_registered() const { return all_registered_.load(); }

 private:
  struct Endpoint {
    PluginServer* server;
    bool registered = false;
    absl::Time next_attempt = absl::InfinitePast();
    Backoff backoff;
  };

  void Reserve(Endpoint& e, const char* why);
  void HandleEvents(int fd, std::vector<Endpoint>& eps);
  void CheckSockets(std::vector<Endpoint>& eps);

  std::vector<PluginServer*> servers_;
  ManagerOptions opts_;
  std::atomic<int> registrations_{0};
  std::atomic<bool> all_registered_{false};
};

}  // namespace neuron::deviceplugin
