// File: lib/csi/csi_node_driver.h
// The CSI node plugin for compile caches (driver cache.neuron.aws.com), as the node agent runs it:
//   1. serve csi.v1.Identity + csi.v1.Node on <plugins_dir>/<driver>/csi.sock;
//   2. then serve pluginregistration.Registration on <registrar_dir>/<driver>-reg.sock (type
//      "CSIPlugin", versions {"1.0.0"}: the kubelet accepts any 1.x), so no
//      node-driver-registrar sidecar is needed;
//   3. keep both sockets in place until `stop`, then remove them.
// Inline ephemeral volumes only (CSIDriver: attachRequired false, podInfoOnMount true,
// volumeLifecycleModes [Ephemeral]); each is a writable overlay over the node's cache copy.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "lib/csi/mounter.h"
#include "lib/csi/volume_backend.h"
#include "lib/csi/volume_records.h"

namespace neuron::csi {

inline constexpr char kDriverName[] = "cache.neuron.aws.com";

struct CsiDriverOptions {
  std::string driver_name = kDriverName;
  std::string node_id;  // the node name
  std::string plugins_dir =
      "/var/lib/kubelet/plugins";  // our socket: <plugins_dir>/<driver>/csi.sock
  std::string registrar_dir = "/var/lib/kubelet/plugins_registry";
  std::string host_plugins_dir;                  // as the kubelet sees plugins_dir ("" = same)
  std::string kubelet_dir = "/var/lib/kubelet";  // target paths must be under <kubelet_dir>/pods/
  std::string state_dir;                         // per-volume upper/work dirs + volume records
  absl::Duration check_interval = absl::Seconds(1);  // socket-present check without events
};

// The paths derived from the options.
std::string CsiSocketPath(const CsiDriverOptions& opts);              // <plugins>/<driver>/csi.sock
std::string CsiEndpointOnHost(const CsiDriverOptions& opts);          // what GetInfo reports
std::string CsiRegistrationSocketPath(const CsiDriverOptions& opts);  // <reg>/<driver>-reg.sock
// PluginInfo.supported_versions: CSI spec versions; the kubelet takes the highest 1.x.
std::vector<std::string> CsiSupportedVersions();

class CsiNodeDriver {
 public:
  // `backend` and `mounter` must outlive the driver; they are called from gRPC threads.
  CsiNodeDriver(CsiDriverOptions opts, VolumeBackend& backend, Mounter& mounter);
  ~CsiNodeDriver();
  CsiNodeDriver(const CsiNodeDriver&) = delete;
  CsiNodeDriver& operator=(const CsiNodeDriver&) = delete;

  // Serves until `stop`, then stops both servers and removes their sockets (published volumes
  // stay mounted: pods keep running, and the next driver unpublishes them from the records).
  // Fails, with both sockets removed, on bad options or when either socket cannot be served.
  absl::Status Run(absl::Notification& stop);

  int active_volumes() const;
  // Every volume with a record (published, or being published right now).
  std::vector<VolumeRecord> published_volumes() const;
  // The kubelet's last registration verdict; Unavailable before it reported.
  absl::Status registration_status() const;

 private:
  struct Parts;
  CsiDriverOptions opts_;
  std::unique_ptr<Parts> parts_;
};

}  // namespace neuron::csi
