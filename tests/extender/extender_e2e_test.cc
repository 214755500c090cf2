// File: tests/extender/extender_e2e_test.cc
// The real neuron-scheduler-extender binary: kubeconfig to an in-process fake kube-apiserver,
// port from the PORT environment variable (as AWS's image is configured), ready once its caches
// synced, a filter call over HTTP, the metrics-only listener, the exec probe mode, and a
// graceful exit on SIGTERM.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "catch2/catch.hpp"
#include "nlohmann/json.hpp"
#include "tests/extender/view_test_util.h"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/testing/http_get.h"
#include "tests/testing/subprocess.h"

namespace neuron::extender::testutil {
namespace {

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return -1;
  }
  close(fd);
  return ntohs(addr.sin_port);
}

TEST_CASE("neuron-scheduler-extender binary end to end", "[e2e]") {
  fakes::FakeApiServer api;
  REQUIRE(api.Start().ok());
  REQUIRE(api.Put("/api/v1/nodes/trn1-a", Node("trn1-a", "trn1.32xlarge", 16, 32)).ok());
  char dir_template[] = "/tmp/extender-e2e-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string dir = dir_template;
  const std::string kubeconfig = dir + "/kubeconfig";
  {
    std::ofstream f(kubeconfig);
    f << "apiVersion: v1\nkind: Config\ncurrent-context: e2e\n"
      << "clusters:\n- name: fake\n  cluster:\n    server: " << api.url() << "\n"
      << "users:\n- name: ext\n  user:\n    token: e2e-token\n"
      << "contexts:\n- name: e2e\n  context:\n    cluster: fake\n    user: ext\n";
  }
  const int port = FreePort();
  const int metrics_port = FreePort();
  REQUIRE(port > 0);
  REQUIRE(metrics_port > 0);
  setenv("PORT", std::to_string(port).c_str(), 1);  // inherited by the child only
  testing::Subprocess ext(
      {testing::BinaryPath("neuron-scheduler-extender"), "--listen=127.0.0.1:12345",
       "--metrics-listen=127.0.0.1:" + std::to_string(metrics_port), "--kubeconfig=" + kubeconfig,
       "--policy=spread", "--log-json"},
      dir + "/extender.log");
  unsetenv("PORT");
  REQUIRE(ext.started());
  REQUIRE(testing::Eventually([&] { return testing::HttpGet(port, "/readyz").status == 200; },
                              absl::Seconds(20)));
  CHECK(testing::HttpGet(port, "/healthz").status == 200);
  const std::string body =
      nlohmann::json{{"Pod", Pod("p", kDev, 3)}, {"Nodes", nullptr}, {"NodeNames", {"trn1-a"}}}
          .dump();
  auto r = testing::HttpPost(port, "/filter", body);
  REQUIRE(r.status == 200);
  auto j = nlohmann::json::parse(r.body);
  CHECK(j["FailedAndUnresolvableNodes"]["trn1-a"] ==
        "trn1.32xlarge takes 1, 4, 8 or 16 devices; asked 3");
  // The second listener serves metrics and health only, never the extender's protocol.
  CHECK(testing::HttpGet(metrics_port, "/metrics").body.find("neuron_extender_requests_total") !=
        std::string::npos);
  CHECK(testing::HttpGet(metrics_port, "/readyz").status == 200);
  CHECK(testing::HttpPost(metrics_port, "/filter", body).status == 404);
  CHECK(testing::HttpPost(metrics_port, "/bind", "{}").status == 404);
  CHECK(testing::HttpGet(metrics_port, "/debug/nodes/trn1-a").status == 404);
  // The exec probe: exit 0 when the loopback listener answers 200, 1 when nothing listens.
  auto probe = [&](int p) {
    testing::Subprocess run({testing::BinaryPath("neuron-scheduler-extender"),
                             "--listen=127.0.0.1:" + std::to_string(p), "--probe=/readyz"},
                            dir + "/probe.log");
    REQUIRE(testing::Eventually([&] { return !run.Running(); }, absl::Seconds(10)));
    return run.Terminate();
  };
  CHECK(probe(port) == 0);
  CHECK(probe(FreePort()) == 1);
  CHECK(ext.Terminate() == 0);
  CHECK(ext.Log().find("shutting down") != std::string::npos);
  CHECK(ext.Log().find("exiting code=0") != std::string::npos);
}

TEST_CASE("neuron-scheduler-extender rejects bad flags with one line", "[e2e]") {
  char dir_template[] = "/tmp/extender-e2e-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  testing::Subprocess ext({testing::BinaryPath("neuron-scheduler-extender"), "--policy=random"},
                          std::string(dir_template) + "/bad.log");
  REQUIRE(testing::Eventually([&] { return !ext.Running(); }));
  CHECK(ext.Terminate() == 2);
  CHECK(ext.Log().find("--policy") != std::string::npos);
  testing::Subprocess lease({testing::BinaryPath("neuron-scheduler-extender"),
                             "--leader-lease=no-slash", "--kubeconfig=/nonexistent"},
                            std::string(dir_template) + "/lease.log");
  REQUIRE(testing::Eventually([&] { return !lease.Running(); }));
  CHECK(lease.Terminate() == 2);
  CHECK(lease.Log().find("--leader-lease") != std::string::npos);
  testing::Subprocess ttl({testing::BinaryPath("neuron-scheduler-extender"),
                           "--ultraserver-reservation-timeout=0s", "--kubeconfig=/nonexistent"},
                          std::string(dir_template) + "/ttl.log");
  REQUIRE(testing::Eventually([&] { return !ttl.Running(); }));
  CHECK(ttl.Terminate() == 2);
  CHECK(ttl.Log().find("--ultraserver-reservation-timeout") != std::string::npos);
}

}  // namespace
}  // namespace neuron::extender::testutil
