// File: lib/k8s/client_factory.cc
#include "lib/k8s/client_factory.h"

#include "lib/k8s/incluster.h"
#include "lib/k8s/kubeconfig.h"
#include "lib/k8s/transport.h"

namespace neuron::k8s {

absl::StatusOr<std::shared_ptr<RestClient>> MakeClient(const std::string& kubeconfig) {
  absl::StatusOr<ClientConfig> cfg =
      kubeconfig.empty() ? InClusterConfig() : LoadKubeconfig(kubeconfig);
  if (!cfg.ok()) return cfg.status();
  absl::StatusOr<std::shared_ptr<Transport>> transport = NewTransport(*cfg);
  if (!transport.ok()) return transport.status();
  return std::make_shared<RestClient>(*transport, cfg->default_namespace);
}

absl::StatusOr<std::shared_ptr<RestClient>> MakeClientIfConfigured(const std::string& kubeconfig) {
  if (kubeconfig.empty() && !InClusterConfig().ok()) return std::shared_ptr<RestClient>();
  return MakeClient(kubeconfig);
}

}  // namespace neuron::k8s
