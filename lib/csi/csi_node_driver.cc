// File: lib/csi/csi_node_driver.cc
#include "lib/csi/csi_node_driver.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "lib/csi/csi_server.h"
#include "lib/csi/node_volumes.h"
#include "lib/dra/registration_server.h"
#include "lib/dra/socket_keeper.h"

#ifndef NEURON_CSI_VERSION
#define NEURON_CSI_VERSION "dev"
#endif

namespace neuron::csi {

namespace fs = std::filesystem;

std::string CsiSocketPath(const CsiDriverOptions& opts) {
  return (fs::path(opts.plugins_dir) / opts.driver_name / "csi.sock").string();
}

std::string CsiEndpointOnHost(const CsiDriverOptions& opts) {
  const std::string& dir = opts.host_plugins_dir.empty() ? opts.plugins_dir : opts.host_plugins_dir;
  return (fs::path(dir) / opts.driver_name / "csi.sock").string();
}

std::string CsiRegistrationSocketPath(const CsiDriverOptions& opts) {
  return (fs::path(opts.registrar_dir) / (opts.driver_name + "-reg.sock")).string();
}

// What node-driver-registrar reports for CSI v1 drivers.
std::vector<std::string> CsiSupportedVersions() { return {"1.0.0"}; }

struct CsiNodeDriver::Parts {
  Parts(const CsiDriverOptions& opts, VolumeBackend& backend, Mounter& mounter)
      : volumes(opts.kubelet_dir, opts.state_dir, backend, mounter),
        csi(CsiIdentity{opts.driver_name, NEURON_CSI_VERSION, opts.node_id}, volumes,
            CsiSocketPath(opts)),
        registration(dra::PluginInfo{"CSIPlugin", opts.driver_name, CsiEndpointOnHost(opts),
                                     CsiSupportedVersions()},
                     CsiRegistrationSocketPath(opts)),
        keeper({{csi.socket_path(), [this] { return csi.Start(); }},
                {registration.socket_path(), [this] { return registration.Start(); }}},
               opts.check_interval) {}

  NodeVolumes volumes;
  CsiServer csi;
  dra::RegistrationServer registration;
  dra::SocketKeeper keeper;
};

CsiNodeDriver::CsiNodeDriver(CsiDriverOptions opts, VolumeBackend& backend, Mounter& mounter)
    : opts_(std::move(opts)), parts_(std::make_unique<Parts>(opts_, backend, mounter)) {}

CsiNodeDriver::~CsiNodeDriver() = default;

absl::Status CsiNodeDriver::Run(absl::Notification& stop) {
  if (opts_.driver_name.empty()) return absl::InvalidArgumentError("CSI driver name is empty");
  if (opts_.node_id.empty()) return absl::InvalidArgumentError("CSI node id (node name) is empty");
  if (opts_.state_dir.empty()) return absl::InvalidArgumentError("CSI state directory is empty");
  if (absl::Status s = parts_->volumes.Init(); !s.ok()) return s;
  spdlog::info(
      "csi node driver driver={} node={} csi_socket={} endpoint_on_host={} registration={} "
      "state_dir={} recorded_volumes={}",
      opts_.driver_name, opts_.node_id, parts_->csi.socket_path(), CsiEndpointOnHost(opts_),
      parts_->registration.socket_path(), opts_.state_dir, parts_->volumes.active_volumes());
  // Serve the endpoint first: the kubelet dials it (NodeGetInfo) as soon as it sees registration.
  if (absl::Status s = parts_->csi.Start(); !s.ok()) return s;
  if (absl::Status s = parts_->registration.Start(); !s.ok()) {
    parts_->csi.Stop();
    return s;
  }
  absl::Status run = parts_->keeper.Run(stop);
  // Registration socket first: deleting it deregisters us before the endpoint goes away.
  parts_->registration.Stop();
  parts_->csi.Stop();
  spdlog::info("csi node driver stopped driver={}", opts_.driver_name);
  return run;
}

int CsiNodeDriver::active_volumes() const { return parts_->volumes.active_volumes(); }

std::vector<VolumeRecord> CsiNodeDriver::published_volumes() const {
  return parts_->volumes.Published();
}

absl::Status CsiNodeDriver::registration_status() const { return parts_->registration.status(); }

}  // namespace neuron::csi
