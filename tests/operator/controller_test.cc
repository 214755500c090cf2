// File: tests/operator/controller_test.cc
// The operator App end to end against the fake kube-apiserver: events drive passes (DeviceConfig
// created, node labels changed, a child's status changed), dropped watches are survived,
// health and metrics are served, and leader election hands over between two replicas.
#include <memory>

#include "lib/operator/app.h"
#include "tests/operator/operator_test_util.h"
#include "tests/testing/http_get.h"
#include "tests/testing/subprocess.h"

namespace neuron::op {
namespace {

using neuron::testing::Eventually;
using neuron::testing::HttpGet;
using nlohmann::json;
using namespace testutil;  // NOLINT(google-build-using-namespace): test helpers

json NeuronLabels() {
  const json selector = LoadYaml(kSample).front()["spec"].value("selector", json::object());
  return selector.is_object() ? selector : json::object();
}

AppOptions TestOptions() {
  AppOptions o;
  o.health_addr = "127.0.0.1:0";
  o.metrics_addr = "127.0.0.1:0";
  o.controller.settings.ns = kNs;
  o.controller.base_backoff = absl::Milliseconds(5);
  o.controller.max_backoff = absl::Milliseconds(200);
  o.lease_duration = absl::Milliseconds(1500);
  o.renew_deadline = absl::Milliseconds(1000);
  o.retry_period = absl::Milliseconds(200);
  return o;
}

int Matching(Cluster& c) {
  const json dc = c.GetDc("neuron");
  if (!dc.contains("status") || !dc["status"].contains("metrics")) return -1;
  return dc["status"]["metrics"]["nodesMatchingSelectorNumber"];
}

TEST_CASE("events drive passes: create, node labels, child status, dropped watches",
          "[operator][controller]") {
  Cluster c;
  c.AddNode("trn-a", NeuronLabels());
  App app(TestOptions(), c.client);
  REQUIRE(app.Start().ok());
  REQUIRE(Eventually([&] { return app.ready(); }));
  CHECK(HttpGet(app.health_port(), "/healthz").status == 200);
  CHECK(HttpGet(app.health_port(), "/readyz").status == 200);

  c.CreateSample(kSample);
  REQUIRE(Eventually([&] { return Matching(c) == 1; }));
  CHECK(!c.server.Get("/apis/apps/v1/namespaces/aws-neuron-operator/daemonsets/neuron-node-metrics")
             .is_null());

  // A new Neuron node moves the selector's set; so does relabelling one away.
  c.AddNode("trn-b", NeuronLabels());
  REQUIRE(Eventually([&] { return Matching(c) == 2; }));
  c.server.CloseWatches();  // as an apiserver timeout would; the informers resume
  if (!NeuronLabels().empty()) {
    json node = c.server.Get("/api/v1/nodes/trn-b");
    node["metadata"]["labels"] = json::object();
    REQUIRE(c.server.Put("/api/v1/nodes/trn-b", node).ok());
    REQUIRE(Eventually([&] { return Matching(c) == 1; }));
  }

  // A child's status change is seen without any DeviceConfig event.
  const std::string ds =
      "/apis/apps/v1/namespaces/aws-neuron-operator/daemonsets/neuron-node-metrics";
  json live = c.server.Get(ds);
  live["status"] = {{"observedGeneration", live["metadata"]["generation"]},
                    {"desiredNumberScheduled", 1},
                    {"updatedNumberScheduled", 1},
                    {"numberAvailable", 1},
                    {"currentNumberScheduled", 1},
                    {"numberReady", 1},
                    {"numberMisscheduled", 0}};
  REQUIRE(c.server.Put(ds, live).ok());
  REQUIRE(Eventually([&] { return CondStatus(c.GetDc("neuron"), "MetricsReady") == "True"; }));

  const auto metrics = HttpGet(app.metrics_port(), "/metrics");
  CHECK(metrics.status == 200);
  CHECK(metrics.body.find("neuron_operator_reconcile_total{result=\"success\"}") !=
        std::string::npos);
  CHECK(metrics.body.find("neuron_operator_reconcile_duration_seconds_bucket") !=
        std::string::npos);
  CHECK(metrics.body.find("neuron_operator_work_queue_depth") != std::string::npos);
  app.Stop();
}

TEST_CASE("leader election: one replica reconciles; the other takes over when it stops",
          "[operator][controller]") {
  Cluster c;
  c.AddNode("trn-a", NeuronLabels());
  AppOptions a_opts = TestOptions();
  a_opts.leader_elect = true;
  a_opts.identity = "replica-a";
  AppOptions b_opts = a_opts;
  b_opts.identity = "replica-b";
  auto a = std::make_unique<App>(a_opts, c.client);
  REQUIRE(a->Start().ok());
  REQUIRE(Eventually([&] { return a->leading(); }));
  App b(b_opts, c.client);
  const size_t lease_reads = c.server.RequestCount("GET", "/leases/");
  REQUIRE(b.Start().ok());
  // b has tried for the lease (a's reads continue too, so wait for several) and still stands by.
  REQUIRE(Eventually([&] { return c.server.RequestCount("GET", "/leases/") >= lease_reads + 4; }));
  CHECK_FALSE(b.leading());
  CHECK(b.ready());  // a standby is healthy

  c.CreateSample(kSample);
  REQUIRE(Eventually([&] { return Matching(c) == 1; }));
  a->Stop();  // releases the lease
  a.reset();
  REQUIRE(Eventually([&] { return b.leading(); }));
  const json lease = c.server.Get(
      "/apis/coordination.k8s.io/v1/namespaces/aws-neuron-operator/leases/"
      "neuron-operator.k8s.aws");
  CHECK(lease["spec"]["holderIdentity"] == "replica-b");
  // The new leader acts on changes.
  c.AddNode("trn-b", NeuronLabels());
  REQUIRE(Eventually([&] { return Matching(c) == 2; }));
  b.Stop();
}

}  // namespace
}  // namespace neuron::op
