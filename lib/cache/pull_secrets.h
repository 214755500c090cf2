// File: lib/cache/pull_secrets.h
// Registry credentials from kubernetes.io/dockerconfigjson Secrets (a cache's spec.pullSecrets),
// as the kubelet reads imagePullSecrets: the first secret with an entry for the registry wins.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/cache/registry_client.h"
#include "nlohmann/json.hpp"

namespace neuron::cache {

// The decoded .dockerconfigjson of each Secret object (also accepts the legacy .dockercfg
// shape). InvalidArgument naming the secret when one is not a docker config secret.
absl::StatusOr<std::vector<std::string>> DockerConfigsFromSecrets(
    const std::vector<nlohmann::json>& secrets);

// A lookup over those configs (copied into the function).
CredentialLookup LookupFromDockerConfigs(std::vector<std::string> configs);

}  // namespace neuron::cache
