// File: tests/fakes/apiserver/fake_apiserver_kubectl_test.cc
// Drives the real `kubectl` against the fake apiserver: create -f, get -o json, apply
// (client-side and --server-side), patch --type=merge, get -w with --request-timeout, delete,
// api-resources. Skipped (with a warning) when kubectl is not on PATH.
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "catch2/catch.hpp"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/fakes/apiserver/test_client.h"

namespace neuron::fakes {
namespace {

using nlohmann::json;

struct Out {
  int rc = -1;
  std::string text;
};

Out Run(const std::string& cmd) {
  Out out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.text.append(buf.data(), n);
  const int status = ::pclose(p);
  out.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

TEST_CASE("real kubectl works against the fake apiserver", "[apiserver][kubectl]") {
  if (Run("command -v kubectl").rc != 0) {
    WARN("kubectl not on PATH: skipping the kubectl test");
    return;
  }
  FakeApiServer fake;
  REQUIRE(fake.Start().ok());
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("fake-apiserver-kubectl-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "kubeconfig") << "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n"
                                    << "  cluster:\n    server: " << fake.url() << "\n"
                                    << "contexts:\n- name: fake\n  context: {cluster: fake, "
                                    << "user: u, namespace: demo}\ncurrent-context: fake\n"
                                    << "users:\n- name: u\n  user: {}\n";
  auto write_cm = [&](const std::string& value) {
    std::ofstream(dir / "cm.yaml") << "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c1\n"
                                   << "  labels: {app: demo}\ndata:\n  k: \"" << value << "\"\n";
  };
  const std::string kubectl = "env HOME=" + dir.string() +
                              " KUBECONFIG=" + (dir / "kubeconfig").string() +
                              " timeout 60 kubectl ";
  const std::string cm_path = "/api/v1/namespaces/demo/configmaps/c1";
  // kubectl before 1.25 (Debian bookworm ships 1.20) validates client-side against the protobuf
  // /openapi/v2 document, which the fake does not serve; newer ones ask the server (openapi/v3
  // and fieldValidation), which it does. Old clients therefore create/apply with
  // --validate=false.
  std::string validate;
  {
    const Out version = Run(kubectl + "version --client -o json");
    const json v = json::parse(
        version.text.substr(std::min(version.text.find('{'), version.text.size())), nullptr, false);
    int minor = 99;
    if (!v.is_discarded() && v.contains("clientVersion")) {
      minor = std::atoi(v["clientVersion"].value("minor", "99").c_str());
    }
    if (minor < 25) validate = "--validate=false ";
  }

  write_cm("v1");
  Out o = Run(kubectl + "create " + validate + "-f " + (dir / "cm.yaml").string());
  INFO(o.text);
  REQUIRE(o.rc == 0);
  CHECK(fake.Get(cm_path)["data"]["k"] == "v1");

  o = Run(kubectl + "get configmap c1 -o json");
  INFO(o.text);
  REQUIRE(o.rc == 0);
  json got = json::parse(o.text, nullptr, false);
  CHECK(got["metadata"]["uid"] == fake.Get(cm_path)["metadata"]["uid"]);

  write_cm("v2");
  o = Run(kubectl + "apply " + validate + "-f " + (dir / "cm.yaml").string());
  INFO(o.text);
  REQUIRE(o.rc == 0);
  CHECK(fake.Get(cm_path)["data"]["k"] == "v2");

  write_cm("v3");
  o = Run(kubectl + "apply --server-side " + validate + "-f " + (dir / "cm.yaml").string());
  INFO(o.text);
  CHECK(o.rc != 0);  // data.k is owned by kubectl-client-side-apply with another value
  CHECK(o.text.find("conflict") != std::string::npos);
  o = Run(kubectl + "apply --server-side --force-conflicts " + validate + "-f " +
          (dir / "cm.yaml").string());
  INFO(o.text);
  REQUIRE(o.rc == 0);
  CHECK(fake.Get(cm_path)["data"]["k"] == "v3");

  o = Run(kubectl + "patch configmap c1 --type=merge -p '{\"data\":{\"p\":\"1\"}}'");
  INFO(o.text);
  REQUIRE(o.rc == 0);
  CHECK(fake.Get(cm_path)["data"]["p"] == "1");

  // Watch: the initial state, then a change made while the watch is open, then the timeout.
  std::thread changer([&] {
    for (int i = 0; i < 4000 && fake.OpenWatches() == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    testing::Call(fake.port(), "PATCH", cm_path, json{{"data", {{"w", "1"}}}},
                  "application/merge-patch+json");
  });
  o = Run(kubectl + "get configmap c1 -w --output-watch-events -o json --request-timeout=5s");
  changer.join();
  INFO(o.text);
  CHECK(o.text.find("\"ADDED\"") != std::string::npos);
  CHECK(o.text.find("\"MODIFIED\"") != std::string::npos);

  o = Run(kubectl + "api-resources");
  INFO(o.text);
  REQUIRE(o.rc == 0);
  CHECK(o.text.find("deployments") != std::string::npos);
  CHECK(o.text.find("leases") != std::string::npos);

  o = Run(kubectl + "delete configmap c1");
  INFO(o.text);
  REQUIRE(o.rc == 0);
  CHECK(fake.Get(cm_path).is_null());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace neuron::fakes
