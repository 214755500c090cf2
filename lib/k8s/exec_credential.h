// File: lib/k8s/exec_credential.h
// kubeconfig `users[].user.exec` credential plugins (client.authentication.k8s.io/v1 and
// v1beta1 ExecCredential), as EKS kubeconfigs use them (`aws eks get-token ...`).
// The plugin runs with its args and extra env plus KUBERNETES_EXEC_INFO; its stdout is an
// ExecCredential whose status carries a token or client cert/key and an optional expiry.
// The result is cached until expirationTimestamp and re-run after a 401.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lib/base/clock.h"
#include "lib/k8s/credentials.h"

namespace neuron::k8s {

struct ExecConfig {
  std::string api_version{};  // client.authentication.k8s.io/v1 | v1beta1
  std::string command{};
  std::vector<std::string> args{};
  std::vector<std::pair<std::string, std::string>> env{};
  std::string interactive_mode{};  // Never | IfAvailable | Always (we never have a TTY)
  bool provide_cluster_info = false;
  // Cluster info passed in KUBERNETES_EXEC_INFO when provide_cluster_info.
  std::string cluster_server{};
  std::string cluster_ca_pem{};
  bool cluster_insecure = false;
};

struct ExecCredentialStatus {
  std::string token{};
  std::string client_certificate_data{};
  std::string client_key_data{};
  std::optional<absl::Time> expiration{};
};

// Parses the plugin's stdout. `want_api_version` must match its apiVersion when non-empty.
absl::StatusOr<ExecCredentialStatus> ParseExecCredential(const std::string& json,
                                                         const std::string& want_api_version);

// Runs the plugin (fork/exec, no shell), returns stdout; non-zero exit -> Unauthenticated with
// the first line of stderr.
absl::StatusOr<std::string> RunExecPlugin(const ExecConfig& cfg, absl::Duration timeout);

class ExecCredentialProvider final : public CredentialProvider {
 public:
  ExecCredentialProvider(ExecConfig cfg, Clock& clock);
  absl::StatusOr<Credentials> Get() override;
  void Invalidate() override;
  int runs() const;

 private:
  const ExecConfig cfg_;
  Clock& clock_;
  mutable absl::Mutex mu_;
  std::optional<Credentials> cached_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Time> expiry_ ABSL_GUARDED_BY(mu_);
  int runs_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace neuron::k8s
