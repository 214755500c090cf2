// File: lib/agent/cache_side.h
// The node agent's compiled-model cache side: the node's cache store, the controller that pulls
// what NeuronCaches ask of this node, and the CSI node driver (cache.neuron.aws.com) that mounts
// a cache into pods as a private writable overlay over the node's copy.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/k8s/rest_client.h"
#include "lib/topology/device_model.h"
#include "prometheus/registry.h"

namespace neuron::agent {

struct CacheSideOptions {
  std::string cache_dir;  // "" = compile caches off
  bool csi = true;        // serve the CSI node driver
  std::string kubelet_dir = "/var/lib/kubelet";
  // As the kubelet sees <kubelet_dir>/plugins, when the container mounts it elsewhere.
  std::string host_plugins_dir;
  std::string operator_namespace = "aws-neuron-operator";
  std::vector<std::string> plain_http_registries;  // host:port pulled over http
  std::string registry_ca_file;                    // extra CA bundle for registries
  uint64_t max_bytes = 8ull << 30;                 // per image, extracted
  absl::Duration stall_timeout = absl::Seconds(30);
};

class CacheSide {
 public:
  // Opens the store (cleaning what a crash left), starts the controller and, with csi, the CSI
  // driver. `family` is the node's chip (unset without devices: no compatibility check).
  static absl::StatusOr<std::unique_ptr<CacheSide>> Start(const CacheSideOptions& opts,
                                                          const std::string& node_name,
                                                          std::optional<topology::Family> family,
                                                          std::shared_ptr<k8s::RestClient> client,
                                                          prometheus::Registry& registry);
  ~CacheSide();  // Stop()
  void Stop();

  struct Parts;

 private:
  explicit CacheSide(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

}  // namespace neuron::agent
