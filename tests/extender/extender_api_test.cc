// File: tests/extender/extender_api_test.cc
// The extender over real HTTP on loopback, fed by the fake kube-apiserver: request bodies shaped
// exactly as kube-scheduler v1.32 sends them (capitalised Go field names, NodeNames or full Nodes),
// bad input, bind (annotations key by key, Binding, idempotent retry), 50 concurrent binds on one
// node, neuron + neuroncore pods sharing a node, preemption, and a restarted extender reaching the
// same decisions. Catch2 assertions stay on the main thread; worker threads only record results.
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "catch2/catch.hpp"
#include "lib/assignment/ids.h"
#include "lib/extender/app.h"
#include "lib/k8s/resource.h"
#include "lib/k8s/rest_client.h"
#include "lib/k8s/transport.h"
#include "tests/extender/api_test_util.h"
#include "tests/extender/view_test_util.h"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/testing/http_get.h"
#include "tests/testing/subprocess.h"

namespace neuron::extender::testutil {
namespace {

using neuron::testing::Eventually;
using neuron::testing::HttpPost;

const std::string kOvn = R"({"default":{"ip_addresses":["10.128.2.17/23"],"role":"primary"}})";

void SeedCluster(Cluster& c) {
  c.Create(Node("trn1-a", "trn1.32xlarge", 16, 32));
  c.Create(Node("trn1-b", "trn1.32xlarge", 16, 32));
  c.Create(Node("inf2-chain", "inf2.24xlarge", 6, 12));
  c.Create(Node("trn2-lnc1", "trn2.48xlarge", 16, 128));
  c.Create(Node("cpu", "m5.xlarge"));
  c.Create(Pod("held", kDev, 8, "trn1-b", "0-7"));
  c.Create(Pod("c2", kDev, 1, "inf2-chain", "2"));
  c.Create(Pod("c5", kDev, 1, "inf2-chain", "5"));
}

TEST_CASE("filter and prioritize in NodeNames and Nodes mode", "[extender][api]") {
  Cluster c;
  SeedCluster(c);
  auto app = StartApp(c);
  const int port = app->port();
  const std::vector<std::string> all = {"trn1-a", "trn1-b", "inf2-chain", "cpu", "ghost"};

  json r = Post(port, "/filter", NamesArgs(Pod("p", kDev, 3), all));
  CHECK(r["NodeNames"].empty());
  CHECK(r["FailedAndUnresolvableNodes"]["trn1-a"] ==
        "trn1.32xlarge takes 1, 4, 8 or 16 devices; asked 3");
  CHECK(r["FailedNodes"]["inf2-chain"] == "largest connected free block is 2 devices; asked 3");
  CHECK(r["FailedAndUnresolvableNodes"]["cpu"] == "node has no Neuron devices");
  CHECK(r["FailedNodes"].contains("ghost"));
  CHECK(r["Error"] == "");
  CHECK(r["Nodes"].is_null());

  r = Post(port, "/filter", NamesArgs(Pod("p", kDev, 8), all));
  CHECK(r["NodeNames"] == json::array({"trn1-a", "trn1-b"}));

  // Full Nodes mode: the surviving Node objects come back whole.
  json nodes = {{"metadata", json::object()},
                {"items", {Node("trn1-a", "trn1.32xlarge", 16, 32), Node("cpu", "m5.xlarge")}}};
  r = Post(port, "/filter",
           json{{"Pod", Pod("p", kDev, 4)}, {"Nodes", nodes}, {"NodeNames", nullptr}}.dump());
  REQUIRE(r["Nodes"]["items"].size() == 1);
  CHECK(r["Nodes"]["items"][0] == nodes["items"][0]);
  CHECK(r["NodeNames"].is_null());

  r = Post(port, "/prioritize", NamesArgs(Pod("p", kDev, 8), {"trn1-a", "trn1-b"}));
  REQUIRE(r.is_array());
  REQUIRE(r.size() == 2);
  CHECK(r[0]["Host"] == "trn1-a");
  CHECK(r[1]["Score"].get<int>() > r[0]["Score"].get<int>());  // binpack: fill trn1-b
  for (const json& h : r) CHECK((h["Score"] >= 0 && h["Score"] <= 10));

  auto dbg = neuron::testing::HttpGet(port, "/debug/nodes/trn1-b");
  REQUIRE(dbg.status == 200);
  json d = json::parse(dbg.body);
  CHECK(d["shape"] == "trn1.32xlarge");
  CHECK(d["free_devices"] == "8-15");
  CHECK(neuron::testing::HttpGet(port, "/debug/nodes/ghost").status == 404);
  auto metrics = neuron::testing::HttpGet(port, "/metrics");
  CHECK(metrics.body.find("neuron_extender_filter_decisions_total") != std::string::npos);
}

TEST_CASE("bad input gets HTTP 400 with a JSON Error, never a crash", "[extender][api]") {
  Cluster c;
  SeedCluster(c);
  auto app = StartApp(c);
  const int port = app->port();
  // A pod whose request (and limit) of `resource` is `q`, as a client could send it.
  auto with = [](const char* resource, const json& q) {
    json pod = Pod("bad", resource, 1);
    pod["spec"]["containers"][0]["resources"]["requests"][resource] = q;
    pod["spec"]["containers"][0]["resources"]["limits"][resource] = q;
    return NamesArgs(pod, {"trn1-a"});
  };
  for (const std::string& body :
       {std::string("{not json"), std::string(""), std::string(R"({"NodeNames":["trn1-a"]})"),
        with(kDev, "-4"), with(kDev, -4), with(kCore, "99999999999"), with(kCore, 1e300),
        with(kCore, "2.5"), std::string(20000, '['), std::string(50 << 20, 'x')}) {
    for (const char* verb : {"/filter", "/prioritize", "/preempt", "/bind"}) {
      auto r = HttpPost(port, verb, body);
      CAPTURE(verb, body.substr(0, 100), r.body.substr(0, 200));
      CHECK(r.status == 400);
      json j = json::parse(r.body, nullptr, false);
      CHECK((j.is_object() && !j.value("Error", "").empty()));
    }
  }
  auto r = HttpPost(port, "/bind", BindArgs("ml", "missing", "trn1-a"));
  CHECK(r.status == 200);
  CHECK(!json::parse(r.body).value("Error", "").empty());
  CHECK(neuron::testing::HttpGet(port, "/healthz").status == 200);
}

TEST_CASE("bind writes our keys only, in the Binding, and is idempotent", "[extender][api]") {
  Cluster c;
  SeedCluster(c);
  json pod = Pod("job", kDev, 4);
  pod["metadata"]["annotations"] = {{"k8s.ovn.org/pod-networks", kOvn}, {"team", "infra"}};
  c.Create(pod);
  auto app = StartApp(c);
  const int port = app->port();
  json r = Post(port, "/bind", BindArgs("ml", "job", "trn1-b"));
  CHECK(r["Error"] == "");
  json stored = c.GetPod("ml", "job");
  CHECK(stored["spec"]["nodeName"] == "trn1-b");
  json ann = stored["metadata"]["annotations"];
  CHECK(ann["k8s.ovn.org/pod-networks"] == kOvn);
  CHECK(ann["team"] == "infra");
  CHECK(ann["AWS_NEURON_IDS"] == "8,9,10,11");  // next to the held half, keeping a row whole
  CHECK(ann["NEURON_RESOURCE_TYPE"] == "neuron");
  CHECK(ann["NEURON_ALLOCATED"] == "false");
  CHECK_FALSE(ann.value("NEURON_ALLOC_TIME", "").empty());
  // kube-scheduler retries after a lost reply: same answer, nothing changes.
  r = Post(port, "/bind", BindArgs("ml", "job", "trn1-b"));
  CHECK(r["Error"] == "");
  CHECK(c.GetPod("ml", "job")["metadata"]["annotations"] == ann);
  // Refused, naming the node it is on: by the extender when its watch already shows the bound
  // pod, else by the apiserver's 409 ("already assigned to node"); which one is a race.
  r = Post(port, "/bind", BindArgs("ml", "job", "trn1-a"));
  const std::string refusal = r["Error"].get<std::string>();
  CAPTURE(refusal);
  CHECK((refusal.find("already bound to trn1-b") != std::string::npos ||
         refusal.find("already assigned to node \"trn1-b\"") != std::string::npos));
  // The watch shows the annotation: the node is now 12 of 16 devices used.
  CHECK(Eventually([&] {
    auto st = app->view().State("trn1-b");
    return st && std::count(st->free_devices.begin(), st->free_devices.end(), true) == 4;
  }));
}

TEST_CASE("a bind costs kube-scheduler one API request", "[extender][api]") {
  Cluster c;
  SeedCluster(c);
  json pod = Pod("one", kCore, 2);
  c.Create(pod);
  auto app = StartApp(c);
  // The watch has shown the pending pod: bind needs nothing more from the API.
  REQUIRE(Eventually([&] { return app->view().Pending("ml/one").has_value(); }));
  // Ready means listed; the two watch requests may still be on their way. Count after them.
  REQUIRE(Eventually([&] { return c.server.OpenWatches() == 2; }));
  const std::string uid = c.GetPod("ml", "one")["metadata"]["uid"];
  const size_t before = c.server.RequestCount("", "");
  json args = json::parse(BindArgs("ml", "one", "trn1-b"));
  args["PodUID"] = uid;
  CHECK(Post(app->port(), "/bind", args.dump())["Error"] == "");
  CHECK(c.server.RequestCount("", "") - before == 1);
  CHECK(c.server.RequestCount("POST", "/pods/one/binding") == 1);
  CHECK(c.server.RequestCount("", "/events") == 0);
  json stored = c.GetPod("ml", "one");
  CHECK(stored["spec"]["nodeName"] == "trn1-b");
  CHECK(stored["metadata"]["annotations"]["NEURON_RESOURCE_TYPE"] == "neuroncore");
}

TEST_CASE("bind refuses a recreated pod and releases its reservation", "[extender][api]") {
  Cluster c;
  SeedCluster(c);
  c.Create(Pod("again", kDev, 4));
  auto app = StartApp(c);
  REQUIRE(Eventually([&] { return app->view().Pending("ml/again").has_value(); }));
  json args = json::parse(BindArgs("ml", "again", "trn1-b"));
  args["PodUID"] = "uid-of-an-older-incarnation";
  json r = Post(app->port(), "/bind", args.dump());
  CHECK(r["Error"].get<std::string>().find("recreated") != std::string::npos);
  CHECK(c.GetPod("ml", "again")["spec"].value("nodeName", "") == "");
  CHECK(app->view().reservation_count() == 0);
}

TEST_CASE("50 concurrent binds on one node never overlap; neuron and neuroncore share silicon",
          "[extender][api]") {
  Cluster c;
  c.Create(Node("big", "trn2.48xlarge", 16, 128));  // LNC=1: 128 cores
  for (int i = 0; i < 50; ++i) c.Create(Pod("w" + std::to_string(i), kCore, 2));
  c.Create(Pod("whole", kDev, 4));
  auto app = StartApp(c);
  const int port = app->port();
  std::vector<neuron::testing::HttpResult> results(50);
  std::vector<std::thread> threads;
  for (int i = 0; i < 50; ++i) {
    threads.emplace_back([&, i] {
      results[i] = HttpPost(port, "/bind", BindArgs("ml", "w" + std::to_string(i), "big"));
    });
  }
  for (auto& t : threads) t.join();
  std::set<int> cores;
  std::set<int> devices_touched;
  for (int i = 0; i < 50; ++i) {
    CAPTURE(i, results[i].body, results[i].error);
    REQUIRE(results[i].status == 200);
    CHECK(json::parse(results[i].body)["Error"] == "");
    json ann = c.GetPod("ml", "w" + std::to_string(i))["metadata"]["annotations"];
    auto ids = assignment::ParseIdList(ann["AWS_NEURON_IDS"].get<std::string>());
    REQUIRE(ids.ok());
    CHECK(ids->size() == 2);
    for (int id : *ids) {
      CHECK(cores.insert(id).second);
      devices_touched.insert(id / 8);
    }
  }
  CHECK(cores.size() == 100);
  // 100 cores fill 12.5 devices; a 4-device `neuron` pod needs a whole free row: none is left.
  json r = Post(port, "/bind", BindArgs("ml", "whole", "big"));
  CHECK_FALSE(r["Error"].get<std::string>().empty());
  CHECK(devices_touched.size() == 13);
}

TEST_CASE("neuron and neuroncore pods never share a device", "[extender][api]") {
  Cluster c;
  c.Create(Node("n", "trn1.32xlarge", 16, 32));
  c.Create(Pod("cores", kCore, 3));
  c.Create(Pod("devs", kDev, 8));
  auto app = StartApp(c);
  const int port = app->port();
  CHECK(Post(port, "/bind", BindArgs("ml", "cores", "n"))["Error"] == "");
  CHECK(Post(port, "/bind", BindArgs("ml", "devs", "n"))["Error"] == "");
  auto core_ids = assignment::ParseIdList(
      c.GetPod("ml", "cores")["metadata"]["annotations"]["AWS_NEURON_IDS"].get<std::string>());
  auto dev_ids = assignment::ParseIdList(
      c.GetPod("ml", "devs")["metadata"]["annotations"]["AWS_NEURON_IDS"].get<std::string>());
  REQUIRE(core_ids.ok());
  REQUIRE(dev_ids.ok());
  for (int core : *core_ids) {
    for (int d : *dev_ids) CHECK(core / 2 != d);
  }
}

TEST_CASE("preempt keeps nodes where eviction helps and trims victims", "[extender][api]") {
  Cluster c;
  c.Create(Node("full", "trn1.32xlarge", 16, 32));
  c.Create(Node("chain", "inf2.24xlarge", 6, 12));
  c.Create(Pod("a", kDev, 8, "full", "0-7"));
  c.Create(Pod("b", kDev, 8, "full", "8-15"));
  c.Create(Pod("x", kDev, 6, "chain", "0-5"));
  auto app = StartApp(c);
  // UIDs as the API server assigned them (kube-scheduler sends those).
  const std::string uid_a = c.GetPod("ml", "a")["metadata"]["uid"];
  const std::string uid_b = c.GetPod("ml", "b")["metadata"]["uid"];
  json victims = {
      {"full", {{"Pods", {{{"UID", uid_a}}, {{"UID", uid_b}}}}, {"NumPDBViolations", 0}}},
      {"chain", {{"Pods", json::array()}, {"NumPDBViolations", 0}}}};
  json body = {{"Pod", Pod("p", kDev, 8)},
               {"NodeNameToVictims", nullptr},
               {"NodeNameToMetaVictims", victims}};
  json r = Post(app->port(), "/preempt", body.dump());
  // Evicting `b` alone frees {8-15}; `a` stays. `chain` cannot be helped.
  CHECK(r == json{{"NodeNameToMetaVictims",
                   {{"full", {{"Pods", {{{"UID", uid_b}}}}, {"NumPDBViolations", 0}}}}}});
}

TEST_CASE("a restarted extender rebuilds its view and decides the same", "[extender][api]") {
  Cluster c;
  SeedCluster(c);
  c.Create(Pod("job", kCore, 6));
  const std::vector<std::string> all = {"trn1-a", "trn1-b", "inf2-chain", "trn2-lnc1", "cpu"};
  std::string before_filter, before_prio;
  {
    auto app = StartApp(c);
    REQUIRE(Post(app->port(), "/bind", BindArgs("ml", "job", "trn1-a"))["Error"] == "");
    REQUIRE(Eventually([&] { return app->view().reservation_count() == 0; }));
    before_filter = Post(app->port(), "/filter", NamesArgs(Pod("q", kCore, 28), all)).dump();
    before_prio = Post(app->port(), "/prioritize", NamesArgs(Pod("q", kCore, 2), all)).dump();
  }
  auto app = StartApp(c);
  CHECK(Post(app->port(), "/filter", NamesArgs(Pod("q", kCore, 28), all)).dump() == before_filter);
  CHECK(Post(app->port(), "/prioritize", NamesArgs(Pod("q", kCore, 2), all)).dump() == before_prio);
  CHECK(json::parse(before_filter)["FailedNodes"].contains("trn1-a"));
}

}  // namespace
}  // namespace neuron::extender::testutil
