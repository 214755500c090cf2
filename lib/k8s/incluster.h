// File: lib/k8s/incluster.h
// In-cluster config (client-go rest.InClusterConfig): https://$KUBERNETES_SERVICE_HOST:
// $KUBERNETES_SERVICE_PORT, the service-account token (re-read as it rotates), ca.crt and
// namespace (or $POD_NAMESPACE) from the service-account directory.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "lib/base/clock.h"
#include "lib/k8s/config.h"

namespace neuron::k8s {

inline constexpr char kServiceAccountDir[] = "/var/run/secrets/kubernetes.io/serviceaccount";

struct InClusterOptions {
  std::string dir = kServiceAccountDir;  // tests point this at a temp dir
  // Empty = read the environment variables.
  std::string host{};
  std::string port{};
  Clock* clock = nullptr;  // null = Clock::Real()
};

// FailedPrecondition when not running in a cluster (env vars unset or token missing).
absl::StatusOr<ClientConfig> InClusterConfig(const InClusterOptions& opts = {});

}  // namespace neuron::k8s
