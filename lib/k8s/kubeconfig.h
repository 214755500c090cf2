// File: lib/k8s/kubeconfig.h
// kubeconfig files (client-go tools/clientcmd/api/v1 types). Supported: current-context and an
// override; clusters[].cluster{server, certificate-authority[-data], insecure-skip-tls-verify,
// tls-server-name}; users[].user{token, tokenFile, client-certificate[-data],
// client-key[-data], exec}; contexts[].context{cluster, user, namespace}. Relative file paths are
// resolved against the kubeconfig's directory. Errors are InvalidArgument naming the field, e.g.
// "kubeconfig: users[0].user.client-key-data: invalid base64".
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "lib/base/clock.h"
#include "lib/k8s/config.h"

namespace neuron::k8s {

struct KubeconfigOptions {
  std::string context{};   // "" = current-context
  std::string base_dir{};  // for relative paths; LoadKubeconfig sets it to the file's directory
  Clock* clock = nullptr;  // for token-file / exec caches; null = Clock::Real()
};

absl::StatusOr<ClientConfig> ParseKubeconfig(const std::string& yaml,
                                             const KubeconfigOptions& opts = {});
absl::StatusOr<ClientConfig> LoadKubeconfig(const std::string& path, KubeconfigOptions opts = {});

// *-data fields: standard base64 (not URL-safe), padding optional, whitespace and line breaks
// ignored (as pasted PEM often has them). InvalidArgument on anything else, including partial
// padding ("YQ="), which Go's decoder rejects too.
absl::StatusOr<std::string> DecodeBase64(const std::string& in);

}  // namespace neuron::k8s
