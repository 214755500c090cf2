#include "lib/k8s/incluster.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace neuron::k8s {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

}  // namespace

absl::StatusOr<ClientConfig> InClusterConfig(const InClusterOptions& opts) {
  const std::string host = opts.host.empty() ? Env("KUBERNETES_SERVICE_HOST") : opts.host;
  const std::string port = opts.port.empty() ? Env("KUBERNETES_SERVICE_PORT") : opts.port;
  if (host.empty() || port.empty()) {
    return absl::FailedPreconditionError(
        "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
  }
  const std::string token_path = opts.dir + "/token";
  if (!std::filesystem::exists(token_path)) {
    return absl::FailedPreconditionError(
        absl::StrCat("in-cluster config: no service-account token at ", token_path));
  }
  ClientConfig cfg;
  // IPv6 literals need brackets.
  const std::string h = host.find(':') != std::string::npos ? absl::StrCat("[", host, "]") : host;
  cfg.server = absl::StrCat("https://", h, ":", port);
  if (!ReadFile(opts.dir + "/ca.crt", &cfg.ca_pem)) {
    return absl::FailedPreconditionError(
        absl::StrCat("in-cluster config: cannot read ", opts.dir, "/ca.crt"));
  }
  std::string ns;
  if (ReadFile(opts.dir + "/namespace", &ns)) ns = std::string(absl::StripAsciiWhitespace(ns));
  if (ns.empty()) ns = Env("POD_NAMESPACE");
  if (!ns.empty()) cfg.default_namespace = ns;
  cfg.credentials = std::make_shared<TokenFileCredentials>(
      token_path, opts.clock ? *opts.clock : Clock::Real(), absl::Minutes(1));
  return cfg;
}

}  // namespace neuron::k8s
