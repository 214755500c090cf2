// File: lib/k8s/credentials.h
// Where a request's identity comes from. A provider is asked before every request (cheap: it
// caches) and told when the server answered 401 so it can refresh (re-read a rotated token,
// re-run an exec plugin).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lib/base/clock.h"

namespace neuron::k8s {

struct Credentials {
  std::string token{};            // bearer token ("" = none)
  std::string client_cert_pem{};  // client certificate chain, PEM ("" = none)
  std::string client_key_pem{};   // its private key, PEM
};

class CredentialProvider {
 public:
  virtual ~CredentialProvider() = default;
  virtual absl::StatusOr<Credentials> Get() = 0;
  // The server rejected the last credentials (HTTP 401): refresh on the next Get().
  virtual void Invalidate() {}
};

// Fixed credentials (kubeconfig token / client certificate).
std::shared_ptr<CredentialProvider> StaticCredentials(Credentials c);

// A bearer token read from a file, re-read when older than `refresh` (client-go: ~1 min) or after
// Invalidate(), as projected service-account tokens rotate. Static client cert may be added.
class TokenFileCredentials final : public CredentialProvider {
 public:
  TokenFileCredentials(std::string path, Clock& clock, absl::Duration refresh = absl::Minutes(1));
  absl::StatusOr<Credentials> Get() override;
  void Invalidate() override;
  // How many times the file was read (for tests).
  int reads() const;

 private:
  const std::string path_;
  Clock& clock_;
  const absl::Duration refresh_;
  mutable absl::Mutex mu_;
  std::string token_ ABSL_GUARDED_BY(mu_);
  absl::Time read_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool stale_ ABSL_GUARDED_BY(mu_) = true;
  int reads_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace neuron::k8s
