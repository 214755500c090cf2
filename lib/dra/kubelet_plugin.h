// File: lib/dra/kubelet_plugin.h
// What the device-plugin binary runs with --api=dra: the DRA driver's kubelet plugin.
//   1. serve DRAPlugin (v1 + v1beta1) on <plugins_dir>/<driver>/dra.sock;
//   2. then serve pluginregistration.Registration on <registrar_dir>/<driver>-reg.sock, whose
//      GetInfo names the DRA socket as the kubelet sees it on the host;
//   3. keep both sockets in place until `stop` (SIGTERM), then remove them.
// ResourceSlice publishing and claim preparation live elsewhere (ClaimPreparer).
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "lib/dra/claim_preparer.h"

namespace neuron::dra {

struct KubeletPluginOptions {
  std::string driver_name = "neuron.aws.com";
  // Watched by the kubelet's plugin watcher (env KUBELET_REGISTRAR_DIRECTORY_PATH).
  std::string registrar_dir = "/var/lib/kubelet/plugins_registry";
  // Parent of the per-driver directory holding dra.sock (env KUBELET_PLUGINS_DIRECTORY_PATH).
  std::string plugins_dir = "/var/lib/kubelet/plugins";
  // plugins_dir as the kubelet sees it, when the container mounts it elsewhere; "" = same path.
  std::string host_plugins_dir;
  absl::Duration check_interval = absl::Seconds(1);  // socket-present check without events
};

// The paths derived from the options.
std::string RegistrationSocketPath(const KubeletPluginOptions& opts);  // <reg>/<driver>-reg.sock
std::string DraSocketPath(const KubeletPluginOptions& opts);      // <plugins>/<driver>/dra.sock
std::string DraEndpointOnHost(const KubeletPluginOptions& opts);  // what GetInfo reports

class RegistrationServer;

class KubeletPlugin {
 public:
  // `preparer` must outlive Run().
  KubeletPlugin(KubeletPluginOptions opts, ClaimPreparer& preparer);
  ~KubeletPlugin();
  KubeletPlugin(const KubeletPlugin&) = delete;
  KubeletPlugin& operator=(const KubeletPlugin&) = delete;

  // Serves until `stop`; then stops both servers and removes their sockets. Fails (with both
  // sockets removed) when either cannot be served at startup: a bad directory or path.
  absl::Status Run(absl::Notification& stop);

  // The kubelet's last registration verdict (RegistrationServer::status()); Unavailable before
  // Run() serves.
  absl::Status registration_status() const;
  // Sockets the keeper served again after they went missing.
  int restores() const;

 private:
  struct Parts;
  KubeletPluginOptions opts_;
  std::unique_ptr<Parts> parts_;
};

}  // namespace neuron::dra
