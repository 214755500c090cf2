// File: tests/extender/api_test_util.h
// The extender over real HTTP against the in-process fake kube-apiserver: a cluster to seed,
// an App started on loopback, and request bodies shaped as kube-scheduler v1.32 sends them.
// Catch2 assertions here run on the calling (main) thread only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "lib/extender/app.h"
#include "lib/k8s/resource.h"
#include "lib/k8s/rest_client.h"
#include "lib/k8s/transport.h"
#include "tests/extender/view_test_util.h"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/testing/http_get.h"
#include "tests/testing/subprocess.h"

namespace neuron::extender::testutil {

using neuron::testing::Eventually;
using neuron::testing::HttpPost;

struct Cluster {
  Cluster() {
    REQUIRE(server.Start().ok());
    k8s::ClientConfig cfg;
    cfg.server = server.url();
    k8s::RetryOptions retry;
    retry.max_attempts = 3;
    retry.backoff = {absl::Milliseconds(5), absl::Milliseconds(50), 2.0, 0.0};
    auto transport = k8s::NewTransport(cfg, {}, retry);
    REQUIRE(transport.ok());
    client = std::make_shared<k8s::RestClient>(*transport);
  }
  void Create(const json& obj) {
    const bool node = obj["kind"] == "Node";
    auto r = client->Create(node ? k8s::resources::kNodes : k8s::resources::kPods,
                            node ? "" : obj["metadata"].value("namespace", "default"), obj);
    REQUIRE(r.ok());
  }
  json GetPod(const std::string& ns, const std::string& name) const {
    return server.Get("/api/v1/namespaces/" + ns + "/pods/" + name);
  }
  fakes::FakeApiServer server;
  std::shared_ptr<k8s::RestClient> client;
};

inline std::unique_ptr<App> StartApp(Cluster& c) {
  AppOptions o;
  o.listen = "127.0.0.1:0";
  auto app = std::make_unique<App>(o, c.client);
  REQUIRE(app->Start().ok());
  REQUIRE(Eventually([&] { return app->ready(); }));
  return app;
}

// ExtenderArgs as HTTPExtender.Filter sends it with nodeCacheCapable: true.
inline std::string NamesArgs(const json& pod, const std::vector<std::string>& names) {
  return json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", names}}.dump();
}

inline std::string BindArgs(const std::string& ns, const std::string& name,
                            const std::string& node) {
  return json{{"PodName", name}, {"PodNamespace", ns}, {"PodUID", ""}, {"Node", node}}.dump();
}

inline json Post(int port, const std::string& path, const std::string& body, int want = 200) {
  auto r = HttpPost(port, path, body);
  CAPTURE(path, r.body.substr(0, 300));
  REQUIRE(r.status == want);
  REQUIRE(r.content_type.find("application/json") == 0);
  return json::parse(r.body);
}

}  // namespace neuron::extender::testutil
