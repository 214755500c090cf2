// File: lib/k8s/config.h
// Everything needed to talk to one API server: where, how to trust it, who we are.
// Built by LoadKubeconfig (kubeconfig.h) or InClusterConfig (incluster.h), or by hand in tests.
#pragma once

#include <memory>
#include <string>

#include "lib/k8s/credentials.h"

namespace neuron::k8s {

struct ClientConfig {
  std::string server{};  // "https://host:port" or "http://host:port" (tests)
  std::string ca_pem{};  // trusted CA bundle, PEM ("" = system default store)
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name{};  // SNI / verification name override ("" = host of `server`)
  std::string default_namespace = "default";
  std::shared_ptr<CredentialProvider> credentials{};  // may be null: anonymous
};

}  // namespace neuron::k8s
