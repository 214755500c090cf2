// File: tests/testing/local_registry.h
// A real OCI registry for tests: Debian's docker-registry (distribution 2.8) on 127.0.0.1 with a
// free port and storage in a temp dir, optionally with TLS (a self-signed certificate for
// IP:127.0.0.1 made with the openssl CLI) and htpasswd basic auth. Push() packs a directory with
// scripts/pack-neuron-cache.sh, exactly as users do.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tests/testing/subprocess.h"

namespace neuron::testing {

struct LocalRegistryOptions {
  bool tls = false;
  std::string username;  // non-empty: basic auth with this user
  std::string password;
};

class LocalRegistry {
 public:
  explicit LocalRegistry(LocalRegistryOptions opts = {});
  ~LocalRegistry();
  LocalRegistry(const LocalRegistry&) = delete;
  LocalRegistry& operator=(const LocalRegistry&) = delete;

  // OK once the registry answered GET /v2/; otherwise why it did not start.
  const absl::Status& status() const { return status_; }
  std::string host() const;  // "127.0.0.1:<port>"
  int port() const { return port_; }
  // The PEM certificate clients must trust ("" without TLS).
  const std::string& ca_file() const { return ca_file_; }
  // Where test files may go; removed with the registry.
  const std::string& scratch_dir() const { return dir_; }

  // Pushes `dir` as `repo_tag` ("repo:tag"); returns the pushed manifest digest.
  absl::StatusOr<std::string> Push(const std::string& dir, const std::string& repo_tag);
  // Stops the registry (the port then refuses connections).
  void Stop();

 private:
  absl::Status Start();
  absl::Status MakeCertificate();
  absl::Status WaitUntilServing();

  LocalRegistryOptions opts_;
  std::string dir_;
  int port_ = 0;
  std::string ca_file_;
  std::string key_file_;
  std::string cert_dir_;  // for skopeo --dest-cert-dir: holds ca.crt
  std::unique_ptr<Subprocess> server_;
  absl::Status status_;
};

// Runs argv to completion (output to `log_path`); the exit code, or -1 if it did not finish
// within `timeout`.
int RunCommand(const std::vector<std::string>& argv, const std::string& log_path,
               absl::Duration timeout = absl::Seconds(60));

// A fresh directory under $TMPDIR (or /tmp).
std::string MakeTempDir(const std::string& prefix);

// A port on 127.0.0.1 that was free a moment ago.
int FreeLoopbackPort();

}  // namespace neuron::testing
