// File: lib/k8s/client_factory.h
// The RestClient a binary runs with: from a kubeconfig file, or the in-cluster service account
// when none is given (client-go's precedence for an explicit --kubeconfig).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "lib/k8s/rest_client.h"

namespace neuron::k8s {

absl::StatusOr<std::shared_ptr<RestClient>> MakeClient(const std::string& kubeconfig);

// For processes that can run without the API: like MakeClient, but nullptr (no API access)
// when no kubeconfig is given and the process is not in a cluster. A kubeconfig that fails to
// load is still an error.
absl::StatusOr<std::shared_ptr<RestClient>> MakeClientIfConfigured(const std::string& kubeconfig);

}  // namespace neuron::k8s
