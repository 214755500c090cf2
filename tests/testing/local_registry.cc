// File: tests/testing/local_registry.cc
#include "tests/testing/local_registry.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include "absl/strings/str_cat.h"

namespace neuron::testing {
namespace {

std::string SourceDir() {
  const char* dir = std::getenv("NEURON_SOURCE_DIR");
  return dir != nullptr ? dir : ".";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

int RunCommand(const std::vector<std::string>& argv, const std::string& log_path,
               absl::Duration timeout) {
  Subprocess p(argv, log_path);
  if (!p.started()) return -1;
  if (!Eventually([&] { return !p.Running(); }, timeout)) return -1;
  return p.Terminate();
}

std::string MakeTempDir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/", prefix, "-XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) return "";
  return tmpl;
}

int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

LocalRegistry::LocalRegistry(LocalRegistryOptions opts)
    : opts_(std::move(opts)), dir_(MakeTempDir("neuron-registry")) {
  status_ = Start();
}

LocalRegistry::~LocalRegistry() {
  Stop();
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

std::string LocalRegistry::host() const { return absl::StrCat("127.0.0.1:", port_); }

void LocalRegistry::Stop() {
  if (server_ != nullptr) server_->Terminate(absl::Seconds(5));
  server_.reset();
}

absl::Status LocalRegistry::MakeCertificate() {
  ca_file_ = dir_ + "/cert.pem";
  key_file_ = dir_ + "/key.pem";
  const int rc = RunCommand(
      {"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
       "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key_file_, "-out", ca_file_, "-days",
       "2", "-subj", "/CN=neuron-test-registry", "-addext", "subjectAltName=IP:127.0.0.1"},
      dir_ + "/openssl.log");
  if (rc != 0) return absl::InternalError("openssl req failed: " + ReadFile(dir_ + "/openssl.log"));
  cert_dir_ = dir_ + "/certs.d";
  std::filesystem::create_directories(cert_dir_);
  std::filesystem::copy_file(ca_file_, cert_dir_ + "/ca.crt");
  return absl::OkStatus();
}

absl::Status LocalRegistry::Start() {
  if (dir_.empty()) return absl::InternalError("cannot make a temp dir");
  port_ = FreeLoopbackPort();
  std::string config = absl::StrCat(
      "version: 0.1\nlog:\n  level: info\nstorage:\n  filesystem:\n    rootdirectory: ", dir_,
      "/storage\n  delete:\n    enabled: true\nhttp:\n  addr: ", host(), "\n");
  if (opts_.tls) {
    if (absl::Status s = MakeCertificate(); !s.ok()) return s;
    absl::StrAppend(&config, "  tls:\n    certificate: ", ca_file_, "\n    key: ", key_file_, "\n");
  }
  if (!opts_.username.empty()) {
    const std::string htpasswd = dir_ + "/htpasswd";
    if (RunCommand({"/usr/bin/htpasswd", "-Bbc", htpasswd, opts_.username, opts_.password},
                   dir_ + "/htpasswd.log") != 0) {
      return absl::InternalError("htpasswd failed: " + ReadFile(dir_ + "/htpasswd.log"));
    }
    absl::StrAppend(&config, "auth:\n  htpasswd:\n    realm: neuron-test\n    path: ", htpasswd,
                    "\n");
  }
  std::ofstream(dir_ + "/config.yml") << config;
  server_ = std::make_unique<Subprocess>(
      std::vector<std::string>{"/usr/bin/docker-registry", "serve", dir_ + "/config.yml"},
      dir_ + "/registry.log");
  return WaitUntilServing();
}

absl::Status LocalRegistry::WaitUntilServing() {
  httplib::Client cli(absl::StrCat(opts_.tls ? "https://" : "http://", host()));
  cli.enable_server_certificate_verification(false);
  cli.set_connection_timeout(1, 0);
  const bool up = Eventually(
      [&] {
        if (!server_->Running()) return true;  // reported below
        auto res = cli.Get("/v2/");
        return res && res->status > 0;
      },
      absl::Seconds(20));
  if (!up || !server_->Running()) {
    return absl::UnavailableError("docker-registry did not start: " + server_->Log());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> LocalRegistry::Push(const std::string& dir,
                                                const std::string& repo_tag) {
  std::vector<std::string> argv{"/bin/bash", SourceDir() + "/scripts/pack-neuron-cache.sh"};
  if (!opts_.username.empty()) {
    argv.insert(argv.end(), {"--creds", opts_.username + ":" + opts_.password});
  }
  if (opts_.tls) {
    argv.insert(argv.end(), {"--cert-dir", cert_dir_});
  } else {
    argv.emplace_back("--tls-verify=false");  // plain http
  }
  argv.insert(argv.end(), {dir, absl::StrCat("docker://", host(), "/", repo_tag)});
  const std::string log = dir_ + "/push.log";
  const int rc = RunCommand(argv, log, absl::Seconds(300));
  const std::string out = ReadFile(log);
  if (rc != 0) return absl::InternalError(absl::StrCat("push failed (", rc, "): ", out));
  std::smatch m;
  if (!std::regex_search(out, m, std::regex("pushed \\S+ (sha256:[0-9a-f]{64})"))) {
    return absl::InternalError("push printed no digest: " + out);
  }
  return m[1].str();
}

}  // namespace neuron::testing
