#include "lib/k8s/exec_credential.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/base/status_macros.h"
#include "lib/k8s/k8s_time.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

extern char** environ;

namespace neuron::k8s {
namespace {

std::string ExecInfo(const ExecConfig& cfg) {
  nlohmann::json spec = {{"interactive", false}};
  if (cfg.provide_cluster_info) {
    nlohmann::json cluster = {{"server", cfg.cluster_server}};
    if (!cfg.cluster_ca_pem.empty()) {
      // A Go []byte in JSON: standard alphabet, padded.
      cluster["certificate-authority-data"] = absl::Base64Escape(cfg.cluster_ca_pem);
    }
    if (cfg.cluster_insecure) cluster["insecure-skip-tls-verify"] = true;
    spec["cluster"] = cluster;
  }
  return nlohmann::json{{"apiVersion", cfg.api_version}, {"kind", "ExecCredential"}, {"spec", spec}}
      .dump();
}

}  // namespace

absl::StatusOr<ExecCredentialStatus> ParseExecCredential(const std::string& text,
                                                         const std::string& want_api_version) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::UnauthenticatedError("exec credential: plugin output is not a JSON object");
  }
  if (StringMember(j, "kind") != "ExecCredential") {
    return absl::UnauthenticatedError("exec credential: kind is not ExecCredential");
  }
  const std::string api = StringMember(j, "apiVersion");
  if (!want_api_version.empty() && api != want_api_version) {
    return absl::UnauthenticatedError(absl::StrCat("exec credential: apiVersion \"", api,
                                                   "\" does not match \"", want_api_version, "\""));
  }
  const nlohmann::json* st = Member(j, "status");
  if (st == nullptr || !st->is_object()) {
    return absl::UnauthenticatedError("exec credential: missing status");
  }
  ExecCredentialStatus out;
  auto str = [&](const char* k) { return StringMember(*st, k); };
  out.token = str("token");
  out.client_certificate_data = str("clientCertificateData");
  out.client_key_data = str("clientKeyData");
  if (out.token.empty() && out.client_certificate_data.empty()) {
    return absl::UnauthenticatedError("exec credential: status has neither token nor certificate");
  }
  if (out.client_certificate_data.empty() != out.client_key_data.empty()) {
    return absl::UnauthenticatedError(
        "exec credential: clientCertificateData and clientKeyData must be given together");
  }
  if (const std::string exp = str("expirationTimestamp"); !exp.empty()) {
    auto t = ParseTime(exp);
    if (!t.ok()) return absl::UnauthenticatedError("exec credential: bad expirationTimestamp");
    out.expiration = *t;
  }
  return out;
}

// Long on purpose: pipe, fork, exec and the timed read are one sequence whose file
// descriptors must be closed on every path; split, each part would need them all.
absl::StatusOr<std::string> RunExecPlugin(const ExecConfig& cfg, absl::Duration timeout) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return absl::InternalError("exec credential: pipe failed");
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return absl::InternalError("exec credential: pipe failed");
  }
  // Everything the child needs is built before fork (no allocation after it).
  std::vector<std::string> env_store;
  for (char** e = environ; e && *e; ++e) {
    if (strncmp(*e, "KUBERNETES_EXEC_INFO=", 21) != 0) env_store.emplace_back(*e);
  }
  for (const auto& [k, v] : cfg.env) env_store.push_back(absl::StrCat(k, "=", v));
  env_store.push_back(absl::StrCat("KUBERNETES_EXEC_INFO=", ExecInfo(cfg)));
  std::vector<char*> envp;
  for (auto& s : env_store) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_store{cfg.command};
  argv_store.insert(argv_store.end(), cfg.args.begin(), cfg.args.end());
  std::vector<char*> argv;
  for (auto& s : argv_store) argv.push_back(s.data());
  argv.push_back(nullptr);

  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("exec credential: fork failed");
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    execvpe(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  std::string out, err;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  const absl::Time deadline = absl::Now() + timeout;
  bool timed_out = false;
  int open_fds = 2;
  while (open_fds > 0) {
    const int ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (ms <= 0) {
      timed_out = true;
      break;
    }
    const int r = poll(fds, 2, ms);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    for (auto& f : fds) {
      if (f.fd < 0 || !(f.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      const ssize_t n = read(f.fd, buf, sizeof(buf));
      if (n > 0) {
        (f.fd == out_pipe[0] ? out : err).append(buf, static_cast<size_t>(n));
        if (out.size() > (16u << 20)) timed_out = true;
      } else if (n == 0 || errno != EINTR) {
        f.fd = -1;
        --open_fds;
      }
    }
    if (timed_out) break;
  }
  close(out_pipe[0]);
  close(err_pipe[0]);
  if (timed_out) kill(pid, SIGKILL);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return absl::UnauthenticatedError("exec credential: plugin timed out");
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    std::string first = err.substr(0, err.find('\n')).substr(0, 200);
    return absl::UnauthenticatedError(
        absl::StrCat("exec credential: ", cfg.command, " failed (status ",
                     WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1, "): ", first));
  }
  return out;
}

ExecCredentialProvider::ExecCredentialProvider(ExecConfig cfg, Clock& clock)
    : cfg_(std::move(cfg)), clock_(clock) {}

absl::StatusOr<Credentials> ExecCredentialProvider::Get() {
  absl::MutexLock lock(&mu_);
  if (cached_ && (!expiry_ || clock_.Now() < *expiry_)) return *cached_;
  ++runs_;
  NEURON_ASSIGN_OR_RETURN(std::string out, RunExecPlugin(cfg_, absl::Seconds(60)));
  NEURON_ASSIGN_OR_RETURN(ExecCredentialStatus st, ParseExecCredential(out, cfg_.api_version));
  spdlog::debug("exec credential refreshed command={} has_expiry={}", cfg_.command,
                st.expiration.has_value());
  cached_ = Credentials{st.token, st.client_certificate_data, st.client_key_data};
  expiry_ = st.expiration;
  return *cached_;
}

void ExecCredentialProvider::Invalidate() {
  absl::MutexLock lock(&mu_);
  cached_.reset();
  expiry_.reset();
}

int ExecCredentialProvider::runs() const {
  absl::MutexLock lock(&mu_);
  return runs_;
}

}  // namespace neuron::k8s
