// File: tests/extender/bind_guard_test.cc
// /bind acts with the extender's own credentials, so it refuses every bind the scheduler that
// owns it would never ask for: each refusal over real HTTP against the fake kube-apiserver,
// with the pod left unbound, the reason counted in /metrics and nothing written.
#include <string>

#include "catch2/catch.hpp"
#include "tests/extender/api_test_util.h"
#include "tests/extender/view_test_util.h"
#include "tests/testing/http_get.h"

namespace neuron::extender::testutil {
namespace {

using neuron::testing::HttpGet;

// The refusal counter for `reason` as /metrics shows it; 0 when the series is absent.
double Refusals(int port, const std::string& reason) {
  const std::string body = HttpGet(port, "/metrics").body;
  const std::string series = "neuron_extender_bind_refusals_total{reason=\"" + reason + "\"} ";
  const size_t at = body.find(series);
  return at == std::string::npos ? 0 : std::stod(body.substr(at + series.size()));
}

struct Guarded {
  Guarded() {
    c.Create(Node("trn1-a", "trn1.32xlarge", 16, 32));
    c.Create(Node("cpu", "m5.xlarge"));
    c.Create(Node("inf2-small", "inf2.xlarge", 1, 2));
  }
  // Binds ns/name to node; the Error kube-scheduler would see.
  std::string Bind(const std::string& name, const std::string& node) {
    return Post(app->port(), "/bind", BindArgs("ml", name, node))["Error"].get<std::string>();
  }
  bool Unbound(const std::string& name) {
    return c.GetPod("ml", name)["spec"].value("nodeName", "").empty();
  }
  void Start() { app = StartApp(c); }
  Cluster c;
  std::unique_ptr<App> app;
};

TEST_CASE("bind refuses a pod of another scheduler", "[extender][api][bind]") {
  Guarded g;
  json pod = Pod("tenant", kDev, 1);
  pod["spec"]["schedulerName"] = "nobody";
  g.c.Create(pod);
  json plain = Pod("default-sched", kDev, 1);
  plain["spec"].erase("schedulerName");  // the API server makes it default-scheduler's
  g.c.Create(plain);
  g.Start();
  const std::string err = g.Bind("tenant", "trn1-a");
  CHECK(err.find("scheduled by \"nobody\"") != std::string::npos);
  CHECK(g.Bind("default-sched", "trn1-a").find("\"default-scheduler\"") != std::string::npos);
  CHECK(g.Unbound("tenant"));
  CHECK(g.Unbound("default-sched"));
  CHECK(g.c.server.RequestCount("POST", "/binding") == 0);
  CHECK(Refusals(g.app->port(), "scheduler_name") == 2);
  CHECK(g.app->view().reservation_count() == 0);
}

TEST_CASE("bind refuses a pod that asks for no Neuron resource", "[extender][api][bind]") {
  Guarded g;
  json pod = Pod("web", "cpu", 1);
  g.c.Create(pod);
  g.Start();
  CHECK(g.Bind("web", "trn1-a").find("asks for no Neuron resource") != std::string::npos);
  CHECK(g.Unbound("web"));
  CHECK(Refusals(g.app->port(), "no_neuron_request") == 1);
}

TEST_CASE("bind refuses an unknown node, an unknown pod and a node the filter refuses",
          "[extender][api][bind]") {
  Guarded g;
  g.c.Create(Pod("job", kDev, 4));
  g.c.Create(Pod("two", kDev, 2));
  g.Start();
  CHECK(g.Bind("job", "no-such-node").find("node no-such-node is not known") != std::string::npos);
  CHECK(g.Bind("ghost", "trn1-a").find("not found") != std::string::npos);
  // The filter refuses both: no Neuron hardware, and a one-device node asked for two.
  CHECK(g.Bind("job", "cpu").find("does not pass the filter") != std::string::npos);
  CHECK(g.Bind("two", "inf2-small").find("does not pass the filter") != std::string::npos);
  CHECK(g.Unbound("job"));
  CHECK(g.Unbound("two"));
  CHECK(g.c.server.RequestCount("POST", "/binding") == 0);
  const int port = g.app->port();
  CHECK(Refusals(port, "unknown_node") == 1);
  CHECK(Refusals(port, "unknown_pod") == 1);
  CHECK(Refusals(port, "filter") == 2);
  // What the owning scheduler does ask is still bound.
  CHECK(g.Bind("job", "trn1-a").empty());
  CHECK(g.c.GetPod("ml", "job")["spec"]["nodeName"] == "trn1-a");
}

}  // namespace
}  // namespace neuron::extender::testutil
