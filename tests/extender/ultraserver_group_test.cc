// File: tests/extender/ultraserver_group_test.cc
// UltraServer pod groups over real HTTP against the fake kube-apiserver: 8 trn2u nodes forming
// UltraServers us-a and us-b, pods filtered, prioritized and bound one at a time as
// kube-scheduler calls the extender. Groups land one pod per node on one set, never straddle
// or share, pack small sets into used UltraServers, carry their placement in annotations, and
// leave sets alone that are held, unhealthy, or reserved until the reservation times out.
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "catch2/catch.hpp"
#include "lib/deviceplugin/ultraserver_env.h"
#include "lib/extender/pod_group.h"
#include "tests/extender/api_test_util.h"
#include "tests/extender/ultraserver_test_util.h"

namespace neuron::extender::testutil {
namespace {

// The device plugin reads what bind writes: the same keys (a header-only check, no linking).
constexpr bool Same(std::string_view a, std::string_view b) { return a == b; }
static_assert(Same(kSetSizeAnnotation, deviceplugin::kUsSetSizeAnnotation));
static_assert(Same(kServerIdAnnotation, deviceplugin::kUsServerIdAnnotation));
static_assert(Same(kNodeIdAnnotation, deviceplugin::kUsNodeIdAnnotation));
static_assert(Same(kModeAnnotation, deviceplugin::kUsModeAnnotation));
static_assert(Same(kRankAnnotation, deviceplugin::kUsRankAnnotation));
static_assert(Same(kRank0HostAnnotation, deviceplugin::kUsRank0HostAnnotation));

const std::vector<std::string> kNodes = {"a0", "a1", "a2", "a3", "b0", "b1", "b2", "b3", "cpu"};

struct UsCluster {
  explicit UsCluster(absl::Duration group_ttl = absl::Minutes(2)) {
    for (int i = 0; i < 4; ++i) {
      c.Create(UsNode("a" + std::to_string(i), "us-a", i));
      c.Create(UsNode("b" + std::to_string(i), "us-b", i));
    }
    c.Create(Node("cpu", "m5.xlarge"));
    AppOptions o;
    o.listen = "127.0.0.1:0";
    o.group_reservation_ttl = group_ttl;
    app = std::make_unique<App>(o, c.client);
    REQUIRE(app->Start().ok());
    REQUIRE(Eventually([&] { return app->ready() && app->view().node_count() == kNodes.size(); }));
  }
  // The filter's answer for the pod as stored now.
  json Filter(const std::string& name) {
    return Post(app->port(), "/filter", NamesArgs(c.GetPod("ml", name), kNodes));
  }
  // kube-scheduler's cycle: filter, the best-scored passing node (first on ties), bind.
  // Returns the node, or "" when no node passed.
  std::string Schedule(const std::string& name) {
    const json pod = c.GetPod("ml", name);
    const json f = Filter(name);
    std::vector<std::string> passed = f["NodeNames"].get<std::vector<std::string>>();
    if (passed.empty()) {
      return "";
    }
    const json scores = Post(app->port(), "/prioritize", NamesArgs(pod, passed));
    std::string best;
    int64_t top = -1;
    for (const json& s : scores) {
      if (s["Score"].get<int64_t>() > top) {
        top = s["Score"].get<int64_t>();
        best = s["Host"].get<std::string>();
      }
    }
    const std::string err =
        Post(app->port(), "/bind", BindArgs("ml", name, best))["Error"].get<std::string>();
    CAPTURE(name, best, err);
    REQUIRE(err.empty());
    return best;
  }
  std::string Annotation(const std::string& pod, const std::string& key) {
    return c.GetPod("ml", pod)["metadata"]["annotations"].value(key, "");
  }
  // Waits until the view holds `n` pods (the watch has shown the binds).
  void Settle(size_t n) {
    REQUIRE(Eventually([&] { return app->view().pod_count() == n; }));
  }
  Cluster c;
  std::unique_ptr<App> app;
};

std::string Us(const std::string& node) { return node.substr(0, 1); }

// Schedules pods <prefix>-0..n-1 of group `prefix` (set of n); returns their nodes in order.
std::vector<std::string> PlaceGroup(UsCluster& u, const std::string& prefix, int n) {
  for (int i = 0; i < n; ++i) {
    u.c.Create(GroupPod(prefix + "-" + std::to_string(i), prefix, n));
  }
  std::vector<std::string> nodes;
  for (int i = 0; i < n; ++i) {
    nodes.push_back(u.Schedule(prefix + "-" + std::to_string(i)));
  }
  return nodes;
}

void CheckRanks(UsCluster& u, const std::string& prefix, const std::vector<std::string>& nodes,
                const std::string& mode) {
  const auto want_id = EmulatedIdentity("us-" + Us(nodes[0]), nodes[0].back() - '0');
  const int n = static_cast<int>(nodes.size());
  for (int i = 0; i < n; ++i) {
    const std::string pod = prefix + "-" + std::to_string(i);
    CAPTURE(pod, nodes[i]);
    const int node_id = (nodes[i].back() - '0') % n;
    CHECK(u.Annotation(pod, "neuron.aws.com/ultraserver-set-size") == std::to_string(n));
    CHECK(u.Annotation(pod, "neuron.aws.com/ultraserver-server-id") ==
          (n == 4 ? want_id.server_id_4 : want_id.server_id_2));
    CHECK(u.Annotation(pod, "neuron.aws.com/ultraserver-node-id") == std::to_string(node_id));
    CHECK(u.Annotation(pod, "neuron.aws.com/ultraserver-rank") == std::to_string(node_id));
    CHECK(u.Annotation(pod, "neuron.aws.com/ultraserver-rank0-host") == nodes[0]);
    CHECK(u.Annotation(pod, "neuron.aws.com/ultraserver-mode") == mode);
    CHECK(u.Annotation(pod, "AWS_NEURON_IDS") == "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15");
  }
}

TEST_CASE("a 4-node group fills one UltraServer, two 2-node groups share the other",
          "[extender][api][ultraserver]") {
  UsCluster u;
  const std::vector<std::string> g4 = PlaceGroup(u, "four", 4);
  REQUIRE(g4[0].back() == '0');  // rank 0 on node 0 of the set
  CHECK(std::set<std::string>(g4.begin(), g4.end()).size() == 4);
  for (const std::string& n : g4) {
    CHECK(Us(n) == Us(g4[0]));
  }
  CheckRanks(u, "four", g4, "1");
  const std::vector<std::string> p = PlaceGroup(u, "pair-p", 2);
  const std::vector<std::string> q = PlaceGroup(u, "pair-q", 2);
  std::set<std::string> pairs(p.begin(), p.end());
  pairs.insert(q.begin(), q.end());
  CHECK(pairs.size() == 4);
  for (const auto* g : {&p, &q}) {
    CHECK(Us((*g)[0]) != Us(g4[0]));
    CHECK((*g)[0].back() - '0' == ((*g)[1].back() - '0') - 1);  // nodes 0,1 or 2,3
    CHECK(((*g)[0].back() - '0') % 2 == 0);
  }
  CheckRanks(u, "pair-p", p, "2");  // X2H: the nodes support mode 2
  CheckRanks(u, "pair-q", q, "2");
  // Everything is held: a third pair finds no set, and says who holds them.
  u.c.Create(GroupPod("pair-r-0", "pair-r", 2));
  const json f = u.Filter("pair-r-0");
  CHECK(f["NodeNames"].empty());
  CHECK(f["FailedNodes"]["a0"].get<std::string>().find("is held by group ml/") !=
        std::string::npos);
  CHECK(f["FailedAndUnresolvableNodes"]["cpu"].get<std::string>().find("not an UltraServer node") !=
        std::string::npos);
  u.Settle(8);
  CHECK(u.app->view().group_reservation_count() == 0);  // all bound: reservations done
}

TEST_CASE("a 2-node group first: the other pair packs in, a 4-node group goes elsewhere",
          "[extender][api][ultraserver]") {
  UsCluster u;
  const std::vector<std::string> p = PlaceGroup(u, "pair-p", 2);
  const std::vector<std::string> q = PlaceGroup(u, "pair-q", 2);
  CHECK(Us(p[0]) == Us(q[0]));  // packed into the used UltraServer
  CHECK(p[0] != q[0]);
  const std::vector<std::string> f = PlaceGroup(u, "four", 4);
  CHECK(Us(f[0]) != Us(p[0]));
  // A second 4-node group has no whole UltraServer left.
  u.c.Create(GroupPod("four-b-0", "four-b", 4));
  const json r = u.Filter("four-b-0");
  CHECK(r["NodeNames"].empty());
  const std::string node0 = Us(p[0]) + "0";
  CHECK(r["FailedNodes"][node0].get<std::string>().find("is held by group ml/pair-") !=
        std::string::npos);
  // A later pod of a group never goes to another set, nor beside its own group's pod.
  u.c.Create(GroupPod("pair-p-extra", "pair-p", 2));
  CHECK(Post(u.app->port(), "/bind", BindArgs("ml", "pair-p-extra", f[0]))["Error"]
            .get<std::string>()
            .find("does not pass the filter") != std::string::npos);
}

TEST_CASE("a 1-node group packs into a used UltraServer", "[extender][api][ultraserver]") {
  UsCluster u;
  const std::vector<std::string> p = PlaceGroup(u, "pair", 2);
  const std::vector<std::string> one = PlaceGroup(u, "solo", 1);
  CHECK(Us(one[0]) == Us(p[0]));
  CHECK(u.Annotation("solo-0", "neuron.aws.com/ultraserver-mode") == "4");
  CHECK(u.Annotation("solo-0", "neuron.aws.com/ultraserver-rank0-host") == one[0]);
  CHECK(u.Annotation("solo-0", "neuron.aws.com/ultraserver-rank") == "0");
}

TEST_CASE("an incomplete group's reservation times out", "[extender][api][ultraserver]") {
  UsCluster u(absl::Seconds(1));
  u.c.Create(GroupPod("four-0", "four", 4));
  const std::string first = u.Schedule("four-0");
  REQUIRE(first.back() == '0');
  const std::string other_pair = Us(first) + "2";
  u.c.Create(GroupPod("pair-0", "pair", 2));
  json f = u.Filter("pair-0");
  CHECK(f["FailedNodes"][other_pair].get<std::string>().find("is held by group ml/four") !=
        std::string::npos);
  CHECK(u.app->view().group_reservation_count() == 1);
  absl::SleepFor(absl::Milliseconds(1200));
  // Only where the group's pod runs stays held; the rest of its UltraServer is free again.
  CHECK(u.app->view().group_reservation_count() == 0);
  f = u.Filter("pair-0");
  const auto passed = f["NodeNames"].get<std::vector<std::string>>();
  CHECK(std::find(passed.begin(), passed.end(), other_pair) != passed.end());
  CHECK(f["FailedNodes"][first].get<std::string>().find("is held by group ml/four") !=
        std::string::npos);
}

TEST_CASE("an unhealthy device keeps new groups off its set, running groups stay",
          "[extender][api][ultraserver]") {
  UsCluster u;
  const std::vector<std::string> p = PlaceGroup(u, "pair-p", 2);
  u.Settle(2);
  const std::string us = Us(p[0]);
  // The device plugin lowers allocatable on a node of the running pair and of the free pair.
  REQUIRE(u.c.server.Put("/api/v1/nodes/" + p[1], UsNode(p[1], "us-" + us, 1, 15)).ok());
  REQUIRE(u.c.server.Put("/api/v1/nodes/" + us + "3", UsNode(us + "3", "us-" + us, 3, 15)).ok());
  REQUIRE(Eventually([&] {
    auto st = u.app->view().State(us + "3");
    return st && st->info.alloc_devices == 15;
  }));
  u.c.Create(GroupPod("pair-q-0", "pair-q", 2));
  const json f = u.Filter("pair-q-0");
  CHECK(f["FailedNodes"][us + "2"].get<std::string>().find("reports unhealthy Neuron devices") !=
        std::string::npos);
  const std::vector<std::string> q = PlaceGroup(u, "pair-q2", 2);
  CHECK(Us(q[0]) != us);
  CHECK(u.c.GetPod("ml", "pair-p-0")["spec"]["nodeName"] == p[0]);
  CHECK(u.c.GetPod("ml", "pair-p-1")["spec"]["nodeName"] == p[1]);
  CHECK(u.c.server.RequestCount("DELETE", "/pods/") == 0);
}

TEST_CASE("LeaderWorkerSet pods form groups; inconsistent groups fail every node",
          "[extender][api][ultraserver]") {
  UsCluster u;
  const std::string topo4 = "neuron.amazonaws.com/ultraserver-server-id-4";
  u.c.Create(LwsPod("lws-0", "k1", 4, topo4));
  u.c.Create(LwsPod("lws-0-1", "k1", 4, topo4));
  const std::string leader = u.Schedule("lws-0");
  CHECK(leader.back() == '0');
  const std::string worker = u.Schedule("lws-0-1");
  CHECK(Us(worker) == Us(leader));
  CHECK(worker != leader);
  CHECK(u.Annotation("lws-0-1", "neuron.aws.com/ultraserver-rank0-host") == leader);
  u.c.Create(LwsPod("bad-0", "k2", 3, topo4));
  json f = u.Filter("bad-0");
  CHECK(f["NodeNames"].empty());
  CHECK(f["FailedAndUnresolvableNodes"]["b0"].get<std::string>().find(
            "must equal the UltraServer set size 4") != std::string::npos);
  json bad = GroupPod("nosize-0", "nosize", 2);
  bad["metadata"]["labels"].erase("neuron.aws.com/ultraserver-nodes");
  u.c.Create(bad);
  f = u.Filter("nosize-0");
  CHECK(f["FailedAndUnresolvableNodes"]["a0"].get<std::string>().find(
            "has no neuron.aws.com/ultraserver-nodes") != std::string::npos);
  // An LWS spread over another topology is no UltraServer group: an ordinary pod, which
  // goes wherever 16 devices are free ("cpu" has none), as before UltraServers.
  u.c.Create(LwsPod("plain-0", "k3", 4, "kubernetes.io/hostname"));
  f = u.Filter("plain-0");
  CHECK(f["NodeNames"].size() == 6);
}

}  // namespace
}  // namespace neuron::extender::testutil

namespace neuron::extender::testutil {
namespace {

TEST_CASE("a cordoned node keeps new groups off its set", "[extender][api][ultraserver]") {
  UsCluster u;
  json cordoned = UsNode("b3", "us-b", 3);
  cordoned["spec"]["unschedulable"] = true;
  REQUIRE(u.c.server.Put("/api/v1/nodes/b3", cordoned).ok());
  REQUIRE(Eventually([&] {
    auto st = u.app->view().State("b3");
    return st && !st->info.schedulable;
  }));
  u.c.Create(GroupPod("four-0", "four", 4));
  const json f = u.Filter("four-0");
  CHECK(f["NodeNames"] == json::array({"a0"}));
  CHECK(f["FailedNodes"]["b0"].get<std::string>().find("b3 of UltraServer set") !=
        std::string::npos);
  CHECK(f["FailedNodes"]["b0"].get<std::string>().find("not Ready or is cordoned") !=
        std::string::npos);
}

TEST_CASE("after a restart a group's later pods follow its bound pods",
          "[extender][api][ultraserver]") {
  UsCluster u;
  for (int i = 0; i < 4; ++i) {
    u.c.Create(GroupPod("four-" + std::to_string(i), "four", 4));
  }
  const std::string first = u.Schedule("four-0");
  const std::string second = u.Schedule("four-1");
  u.Settle(2);
  // A new extender (a restart, or a new leader) knows the group only from its bound pods.
  u.app->Stop();
  AppOptions o;
  o.listen = "127.0.0.1:0";
  u.app = std::make_unique<App>(o, u.c.client);
  REQUIRE(u.app->Start().ok());
  REQUIRE(Eventually([&] { return u.app->ready() && u.app->view().pod_count() == 2; }));
  const std::string third = u.Schedule("four-2");
  const std::string fourth = u.Schedule("four-3");
  const std::set<std::string> nodes = {first, second, third, fourth};
  CHECK(nodes.size() == 4);
  for (const std::string& n : nodes) {
    CHECK(Us(n) == Us(first));
  }
  CHECK(u.Annotation("four-3", "neuron.aws.com/ultraserver-rank0-host") == Us(first) + "0");
}

}  // namespace
}  // namespace neuron::extender::testutil
