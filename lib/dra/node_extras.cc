// File: lib/dra/node_extras.cc
#include "lib/dra/node_extras.h"

#include <utility>

#include "lib/dra/node_labels.h"
#include "lib/k8s/resource.h"
#include "lib/ultraserver/read_identity.h"
#include "spdlog/spdlog.h"

namespace neuron::dra {

NodeExtras::NodeExtras(const sysfs::Fs& fs, k8s::RestClient& client, std::string node_name)
    : fs_(fs), client_(client), node_name_(std::move(node_name)) {}

UltraServerFacts NodeExtras::UltraServer() const {
  absl::StatusOr<std::optional<ultraserver::Identity>> id = ultraserver::ReadIdentity(fs_);
  if (id.ok()) {
    return {absl::OkStatus(), *std::move(id)};
  }
  if (absl::IsInvalidArgument(id.status())) {
    spdlog::warn("dra: unreadable UltraServer identity, published as no UltraServer error=\"{}\"",
                 std::string(id.status().message()));
    return {absl::OkStatus(), std::nullopt};
  }
  return {id.status(), std::nullopt};
}

std::array<std::string, 3> NodeExtras::Layers() {
  absl::StatusOr<nlohmann::json> node = client_.Get(k8s::resources::kNodes, "", node_name_);
  absl::MutexLock lock(&mu_);
  if (!node.ok()) {
    spdlog::warn(
        "dra: cannot read node={} for its network topology labels, keeping the last "
        "ones error=\"{}\"",
        node_name_, std::string(node.status().message()));
    return layers_;
  }
  layers_ = NetworkNodeLayers(*node);
  return layers_;
}

absl::Status NodeExtras::Fill(NodeDeviceInfo& info) {
  UltraServerFacts us = UltraServer();
  {
    absl::MutexLock lock(&mu_);
    if (us.status.ok()) {
      last_identity_ = us;
    } else if (last_identity_) {
      spdlog::warn(
          "dra: UltraServer identity unreadable, publishing the last one read error=\"{}\"",
          std::string(us.status.message()));
      us = *last_identity_;
    } else {
      return us.status;
    }
  }
  info.ultraserver = std::move(us.identity);
  info.network_node_layers = Layers();
  return absl::OkStatus();
}

}  // namespace neuron::dra
