// File: lib/deviceplugin/plugin_server.h
// One v1beta1.DevicePlugin endpoint (one resource) served on a unix socket, plus the client
// side of v1beta1.Registration. gRPC types stay in the .cc files.
//
//   PluginServer server(allocator, source, hints, "/var/lib/kubelet/device-plugins/neuron.sock");
//   NEURON_RETURN_IF_ERROR(server.Start());          // serve first ...
//   NEURON_RETURN_IF_ERROR(RegisterWithKubelet(...)); // ... then register
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "lib/deviceplugin/allocator.h"
#include "lib/deviceplugin/device_source.h"
#include "lib/deviceplugin/metrics.h"
#include "lib/deviceplugin/silicon_ledger.h"
#include "lib/deviceplugin/ultraserver_env.h"

namespace neuron::deviceplugin {

// Where GetPreferredAllocation learns the scheduler extender's choice (pod annotations).
class AllocationHints {
 public:
  virtual ~AllocationHints() = default;
  // IDs the extender chose for a pod bound to this node that still waits for `size` IDs of
  // `kind`; nullopt when there is none (or no API access).
  virtual std::optional<std::vector<int>> HintFor(assignment::ResourceKind kind, int size) = 0;
  // Allocate has no pod identity: the annotations of the pod bound here whose pending choice
  // is exactly `ids` of `kind` (the pod this Allocate serves, as the kubelet followed the
  // preferred allocation); nullopt when there is none (or no API access).
  virtual std::optional<std::map<std::string, std::string>> PendingPodFor(
      assignment::ResourceKind /*kind*/, const std::vector<int>& /*ids*/) {
    return std::nullopt;
  }
};

class PluginServer {
 public:
  // `hints` may be null. `on_allocated` (may be empty) runs after every successful Allocate.
  // `ledger` (may be null) keeps the two resources from sharing silicon: GetPreferredAllocation
  // avoids devices held through the other resource and Allocate refuses them.
  PluginServer(const Allocator& allocator, const DeviceSource& source, AllocationHints* hints,
               std::string socket_path, std::function<void()> on_allocated = {},
               SiliconLedger* ledger = nullptr);
  ~PluginServer();
  PluginServer(const PluginServer&) = delete;
  PluginServer& operator=(const PluginServer&) = delete;

  // Counts Allocate calls and open ListAndWatch streams in `metrics` (may be null; must outlive
  // this server). Call before Start().
  void set_metrics(PluginMetrics* metrics);
  // Reads this node's UltraServer identity: Allocate then gives a container of a pod the
  // extender placed in an UltraServer group (ultraserver_env.h) the runtime's environment,
  // found through `hints` (PendingPodFor). Unset: no such environment. Call before Start().
  void set_ultraserver_identity(IdentityFn identity);

  // Removes a stale socket file, listens on the unix socket and serves on gRPC's threads.
  // Restartable after Stop().
  absl::Status Start();
  // Ends every ListAndWatch stream, shuts the server down and removes the socket file.
  void Stop();
  bool running() const;
  // Devices or health changed: every open ListAndWatch stream sends a new full list.
  void NotifyChanged();

  const std::string& socket_path() const { return socket_path_; }
  std::string endpoint() const;  // socket file name
  assignment::ResourceKind kind() const { return allocator_.kind(); }

  struct Impl;  // internal; public only for the .cc's service class

 private:
  const Allocator& allocator_;
  std::string socket_path_;
  std::unique_ptr<Impl> impl_;
};

// Calls v1beta1.Registration/Register on `kubelet_socket` with version v1beta1, the endpoint
// (socket file name), the resource name and options{get_preferred_allocation_available: true}.
// The kubelet dials the plugin back and calls GetDevicePluginOptions before answering, so the
// plugin must already be serving. Unavailable when the kubelet is absent.
absl::Status RegisterWithKubelet(const std::string& kubelet_socket, const std::string& endpoint,
                                 assignment::ResourceKind kind,
                                 absl::Duration timeout = absl::Seconds(10));

}  // namespace neuron::deviceplugin
