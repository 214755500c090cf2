// File: lib/dra/kubelet_plugin.cc
#include "lib/dra/kubelet_plugin.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/dra/dra_service.h"
#include "lib/dra/registration_server.h"
#include "lib/dra/socket_keeper.h"

namespace neuron::dra {

namespace fs = std::filesystem;

std::string RegistrationSocketPath(const KubeletPluginOptions& opts) {
  return (fs::path(opts.registrar_dir) / (opts.driver_name + "-reg.sock")).string();
}

std::string DraSocketPath(const KubeletPluginOptions& opts) {
  return (fs::path(opts.plugins_dir) / opts.driver_name / "dra.sock").string();
}

std::string DraEndpointOnHost(const KubeletPluginOptions& opts) {
  const std::string& dir = opts.host_plugins_dir.empty() ? opts.plugins_dir : opts.host_plugins_dir;
  return (fs::path(dir) / opts.driver_name / "dra.sock").string();
}

struct KubeletPlugin::Parts {
  Parts(const KubeletPluginOptions& opts, ClaimPreparer& preparer)
      : dra(preparer, DraSocketPath(opts)),
        registration(PluginInfo{"DRAPlugin", opts.driver_name, DraEndpointOnHost(opts),
                                DraSupportedVersions()},
                     RegistrationSocketPath(opts)),
        keeper({{dra.socket_path(), [this] { return dra.Start(); }},
                {registration.socket_path(), [this] { return registration.Start(); }}},
               opts.check_interval) {}

  DraServer dra;
  RegistrationServer registration;
  SocketKeeper keeper;
};

KubeletPlugin::KubeletPlugin(KubeletPluginOptions opts, ClaimPreparer& preparer)
    : opts_(std::move(opts)), parts_(std::make_unique<Parts>(opts_, preparer)) {}

KubeletPlugin::~KubeletPlugin() = default;

absl::Status KubeletPlugin::Run(absl::Notification& stop) {
  if (opts_.driver_name.empty()) return absl::InvalidArgumentError("driver name is empty");
  spdlog::info("dra kubelet plugin driver={} dra_socket={} endpoint_on_host={} registration={}",
               opts_.driver_name, parts_->dra.socket_path(), DraEndpointOnHost(opts_),
               parts_->registration.socket_path());
  // Serve the endpoint first: the kubelet may dial it as soon as the registration socket exists.
  if (absl::Status s = parts_->dra.Start(); !s.ok()) return s;
  if (absl::Status s = parts_->registration.Start(); !s.ok()) {
    parts_->dra.Stop();
    return s;
  }
  absl::Status run = parts_->keeper.Run(stop);
  // Registration socket first: deleting it deregisters us before the endpoint goes away.
  parts_->registration.Stop();
  parts_->dra.Stop();
  spdlog::info("dra kubelet plugin stopped driver={}", opts_.driver_name);
  return run;
}

absl::Status KubeletPlugin::registration_status() const { return parts_->registration.status(); }

int KubeletPlugin::restores() const { return parts_->keeper.restores(); }

}  // namespace neuron::dra
