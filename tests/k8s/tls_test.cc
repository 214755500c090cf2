// TLS transport tests against a small httplib::SSLServer (the fake API server has no TLS):
// certificates made with the openssl CLI at test time; in-cluster config from a temp dir;
// CA verification, tls-server-name, insecure-skip-tls-verify, client certificates. Also: a
// server answering invalid JSON is an error, not a crash.
#include <cstdlib>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "catch2/catch.hpp"
#include "httplib.h"
#include "lib/k8s/incluster.h"
#include "lib/k8s/kubeconfig.h"
#include "lib/k8s/rest_client.h"
#include "tests/k8s/test_util.h"

namespace neuron::k8s {
namespace {

using testutil::ReadFile;
using testutil::TempDir;
using testutil::WriteFile;

std::string Base64(const std::string& path) {
  return std::string(absl::StripTrailingAsciiWhitespace([&] {
    const std::string cmd = "base64 -w0 " + path;
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
    pclose(p);
    return out;
  }()));
}

void Sh(const std::string& cmd) {
  INFO(cmd);
  REQUIRE(std::system(("(" + cmd + ") >/dev/null 2>&1").c_str()) == 0);
}

// CA, server cert (SAN api.internal + 127.0.0.1), client cert, and a second unrelated CA.
void MakeCerts(const std::string& d) {
  Sh("cd " + d +
     " && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt "
     "-days 2 -subj /CN=test-ca");
  Sh("cd " + d +
     " && openssl req -x509 -newkey rsa:2048 -nodes -keyout other.key -out other.crt "
     "-days 2 -subj /CN=other-ca");
  WriteFile(d + "/san.ext", "subjectAltName=DNS:api.internal,IP:127.0.0.1\n");
  Sh("cd " + d +
     " && openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr "
     "-subj /CN=apiserver && openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key "
     "-CAcreateserial -out server.crt -days 2 -extfile san.ext");
  Sh("cd " + d +
     " && openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr "
     "-subj /CN=neuron-user && openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key "
     "-CAcreateserial -out client.crt -days 2");
}

struct TlsServer {
  std::unique_ptr<httplib::SSLServer> srv;
  std::thread thread;
  int port = 0;
  std::string expect_token;  // "" = no auth check
  TlsServer(const std::string& d, bool mtls) {
    srv = std::make_unique<httplib::SSLServer>((d + "/server.crt").c_str(),
                                               (d + "/server.key").c_str(),
                                               mtls ? (d + "/ca.crt").c_str() : nullptr);
    REQUIRE(srv->is_valid());
    srv->Get("/api/v1/namespaces/ns/configmaps/a", [this](const httplib::Request& req,
                                                          httplib::Response& res) {
      if (!expect_token.empty() &&
          req.get_header_value("Authorization") != "Bearer " + expect_token) {
        res.status = 401;
        res.set_content(R"({"kind":"Status","reason":"Unauthorized","code":401})",
                        "application/json");
        return;
      }
      res.set_content(R"({"kind":"ConfigMap","metadata":{"name":"a"}})", "application/json");
    });
    port = srv->bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { srv->listen_after_bind(); });
  }
  ~TlsServer() {
    srv->stop();
    thread.join();
  }
};

absl::Status GetA(const ClientConfig& cfg) {
  auto t = NewTransport(cfg, {.connect_timeout = absl::Seconds(5)}, {.max_attempts = 1});
  if (!t.ok()) return t.status();
  RestClient c(*t);
  auto r = c.Get(resources::kConfigMaps, "ns", "a");
  if (!r.ok()) return r.status();
  return (*r)["metadata"]["name"] == "a" ? absl::OkStatus() : absl::InternalError("bad body");
}

TEST_CASE("TLS: in-cluster config, CA verification, server name, client certs", "[tls]") {
  TempDir dir;
  const std::string d = dir.path();
  MakeCerts(d);

  SECTION("in-cluster: service-account token and ca.crt; rotated token re-read on 401") {
    TlsServer server(d, false);
    server.expect_token = "sa-token-1";
    TempDir sa;
    WriteFile(sa.path() + "/token", "sa-token-1\n");
    Sh("cp " + d + "/ca.crt " + sa.path() + "/ca.crt");
    WriteFile(sa.path() + "/namespace", "neuron");
    auto cfg = InClusterConfig(
        {.dir = sa.path(), .host = "127.0.0.1", .port = std::to_string(server.port)});
    REQUIRE(cfg.ok());
    CHECK(cfg->default_namespace == "neuron");
    CHECK(GetA(*cfg).ok());
    WriteFile(sa.path() + "/token", "sa-token-2\n");  // kubelet rotated it
    server.expect_token = "sa-token-2";
    CHECK(GetA(*cfg).ok());  // 401 -> re-read -> retry
  }
  SECTION("CA verification, insecure-skip-tls-verify and tls-server-name") {
    TlsServer server(d, false);
    ClientConfig cfg;
    cfg.server = absl::StrCat("https://127.0.0.1:", server.port);
    cfg.ca_pem = ReadFile(d + "/ca.crt");
    CHECK(GetA(cfg).ok());
    cfg.ca_pem = ReadFile(d + "/other.crt");
    CHECK(GetA(cfg).code() == absl::StatusCode::kUnavailable);  // untrusted
    cfg.insecure_skip_tls_verify = true;
    CHECK(GetA(cfg).ok());
    cfg.insecure_skip_tls_verify = false;
    cfg.ca_pem = ReadFile(d + "/ca.crt");
    cfg.tls_server_name = "api.internal";
    CHECK(GetA(cfg).ok());
    cfg.tls_server_name = "wrong.internal";
    CHECK(!GetA(cfg).ok());
  }
  SECTION("client certificate from kubeconfig data fields (mTLS)") {
    TlsServer server(d, true);
    const std::string kc = absl::StrCat(
        "current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n",
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:", server.port,
        "', certificate-authority-data: ", Base64(d + "/ca.crt"), "}}]\n",
        "users: [{name: u, user: {client-certificate-data: ", Base64(d + "/client.crt"),
        ", client-key-data: ", Base64(d + "/client.key"), "}}]\n");
    auto cfg = ParseKubeconfig(kc);
    REQUIRE(cfg.ok());
    CHECK(GetA(*cfg).ok());
    ClientConfig anon;
    anon.server = cfg->server;
    anon.ca_pem = cfg->ca_pem;
    CHECK(!GetA(anon).ok());  // server requires a client certificate
  }
}

TEST_CASE("invalid JSON from the server is an error, not a crash", "[tls]") {
  httplib::Server srv;
  srv.Get("/api/v1/namespaces/ns/configmaps/a",
          [](const httplib::Request&, httplib::Response& res) {
            res.set_content("{\"kind\":\"ConfigMap\",\"metadata\":", "application/json");
          });
  srv.Get("/api/v1/namespaces/ns/configmaps",
          [](const httplib::Request& req, httplib::Response& res) {
            if (req.has_param("watch")) {
              res.set_content("{\"type\":\"ADDED\",\"object\":{\"metadata\":{}}}\n{\"type\":\"ADD",
                              "application/json");
              return;
            }
            res.set_content("{\"items\": 5}", "application/json");
          });
  const int port = srv.bind_to_any_port("127.0.0.1");
  std::thread t([&] { srv.listen_after_bind(); });
  ClientConfig cfg;
  cfg.server = absl::StrCat("http://127.0.0.1:", port);
  RestClient c(*NewTransport(cfg, {}, {.max_attempts = 1}));
  CHECK(c.Get(resources::kConfigMaps, "ns", "a").status().code() == absl::StatusCode::kDataLoss);
  CHECK(c.List(resources::kConfigMaps, "ns").status().code() == absl::StatusCode::kDataLoss);
  int events = 0;
  // A truncated final event at EOF is not delivered; the stream ends without a crash.
  auto s = c.Watch(resources::kConfigMaps, "ns", {}, [&](WatchEvent&) {
    ++events;
    return true;
  });
  CHECK(s.ok());
  CHECK(events == 1);
  srv.stop();
  t.join();
}

}  // namespace
}  // namespace neuron::k8s
