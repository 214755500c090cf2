// File: lib/operator/registry_resolver.h
// The operator's DigestResolver: asks the cache's registry what its tag points to now (one
// manifest GET, with the cache's pull secrets), so every node extracts the same digest.
#pragma once

#include <string>

#include "lib/cache/registry_client.h"
#include "lib/k8s/rest_client.h"
#include "lib/operator/cache_controller.h"

namespace neuron::op {

class RegistryDigestResolver : public DigestResolver {
 public:
  // ClusterNeuronCache pull secrets are read in `operator_namespace`.
  RegistryDigestResolver(k8s::RestClient& client, std::string operator_namespace,
                         cache::RegistryOptions registry);

  absl::StatusOr<std::string> Resolve(const cache::CacheSpec& spec) override;

 private:
  k8s::RestClient& client_;
  const std::string operator_namespace_;
  cache::RegistryClient registry_;
};

}  // namespace neuron::op
