// File: tests/extender/extender_families_test.cc
// Every family's placement rules over real HTTP, in both wire modes kube-scheduler uses
// (NodeNames with nodeCacheCapable, full Nodes without), with the reasons a person reads.
// Expectations come from the rules (../shared/NEURON.md §3-4, lib/topology/choose.h): rings take
// any contiguous window (wrapping), inf2.24xlarge is a chain without wrap, trn1/trn2 tori take
// 1, 4, 8 or 16 aligned devices, cores come from linked devices, LNC divides physical cores.
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "tests/extender/api_test_util.h"
#include "tests/extender/view_test_util.h"

namespace neuron::extender::testutil {
namespace {

struct Case {
  std::string node;      // a node seeded below
  const char* resource;  // kDev or kCore
  int count;
  bool fits;
  bool unresolvable;   // when it does not fit: no state of the node could ever fit
  std::string reason;  // exact text when it does not fit
};

void Seed(Cluster& c) {
  c.Create(Node("inf1-24", "inf1.24xlarge", 16, 64));
  c.Create(Pod("i1-a", kDev, 1, "inf1-24", "0"));
  c.Create(Pod("i1-b", kDev, 1, "inf1-24", "8"));  // free blocks 1-7 and 9-15: 7 each
  c.Create(Node("inf2-1", "inf2.xlarge", 1, 2));
  c.Create(Node("inf2-ring", "inf2.48xlarge", 12, 24));
  c.Create(Pod("r", kDev, 8, "inf2-ring", "2-9"));  // free 10, 11, 0, 1: one block across the wrap
  c.Create(Node("inf2-chain", "inf2.24xlarge", 6, 12));
  c.Create(Pod("c2", kDev, 1, "inf2-chain", "2"));
  c.Create(Pod("c5", kDev, 1, "inf2-chain", "5"));  // free 0-1 and 3-4
  c.Create(Node("trn1", "trn1.32xlarge", 16, 32));
  c.Create(Node("trn2-lnc2", "trn2.48xlarge", 16, 64));
  c.Create(Node("trn2-lnc1", "trn2.48xlarge", 16, 128,
                {{"feature.node.kubernetes.io/aws-neuron-lnc", "1"}}));
}

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      // inf1.24xlarge: a ring of 16 devices with 4 cores each.
      {"inf1-24", kDev, 7, true, false, ""},
      {"inf1-24", kDev, 8, false, false, "largest connected free block is 7 devices; asked 8"},
      {"inf1-24", kDev, 17, false, true, "inf1.24xlarge has 16 devices; asked 17"},
      {"inf1-24", kCore, 28, true, false, ""},  // 7 linked free devices x 4 cores
      // inf2.xlarge: one device, two cores.
      {"inf2-1", kDev, 1, true, false, ""},
      {"inf2-1", kDev, 2, false, true, "inf2.xlarge has 1 device; asked 2"},
      {"inf2-1", kCore, 2, true, false, ""},
      {"inf2-1", kCore, 3, false, true, "inf2.xlarge has 2 cores; asked 3"},
      // inf2.48xlarge: a ring of 12; the free block wraps from 10 to 1.
      {"inf2-ring", kDev, 4, true, false, ""},
      {"inf2-ring", kDev, 5, false, false, "4 of 12 devices free; asked 5"},
      // inf2.24xlarge: a chain 0-1-2-3-4-5 without the 5-0 link.
      {"inf2-chain", kDev, 2, true, false, ""},
      {"inf2-chain", kDev, 3, false, false, "largest connected free block is 2 devices; asked 3"},
      // trn1.32xlarge: 1, 4, 8 or 16 devices; 2 cores per device.
      {"trn1", kDev, 8, true, false, ""},
      {"trn1", kDev, 3, false, true, "trn1.32xlarge takes 1, 4, 8 or 16 devices; asked 3"},
      {"trn1", kCore, 32, true, false, ""},
      {"trn1", kCore, 33, false, true, "trn1.32xlarge has 32 cores; asked 33"},
      // trn2.48xlarge: 8 physical cores per device; LNC 2 (default) -> 64, LNC 1 -> 128.
      {"trn2-lnc2", kCore, 64, true, false, ""},
      {"trn2-lnc2", kCore, 100, false, true, "trn2.48xlarge has 64 cores; asked 100"},
      {"trn2-lnc1", kCore, 100, true, false, ""},
      {"trn2-lnc1", kDev, 16, true, false, ""},
  };
  return cases;
}

bool Contains(const json& list, const std::string& name) {
  for (const json& n : list) {
    if ((n.is_string() && n == name) || (n.is_object() && n["metadata"]["name"] == name)) {
      return true;
    }
  }
  return false;
}

TEST_CASE("every family's rules over HTTP, in NodeNames and full Nodes mode", "[extender][api]") {
  Cluster c;
  Seed(c);
  auto app = StartApp(c);
  for (const Case& k : Cases()) {
    const json pod = Pod("p", k.resource, k.count);
    const json node = c.server.Get("/api/v1/nodes/" + k.node);
    REQUIRE(node.is_object());
    for (const bool names_mode : {true, false}) {
      CAPTURE(k.node, k.resource, k.count, names_mode);
      const std::string body =
          names_mode
              ? NamesArgs(pod, {k.node})
              : json{{"Pod", pod},
                     {"Nodes", {{"metadata", json::object()}, {"items", json::array({node})}}},
                     {"NodeNames", nullptr}}
                    .dump();
      const json r = Post(app->port(), "/filter", body);
      const json& passed = names_mode ? r["NodeNames"] : r["Nodes"]["items"];
      CHECK(Contains(passed, k.node) == k.fits);
      if (k.fits) continue;
      const json& failed = k.unresolvable ? r["FailedAndUnresolvableNodes"] : r["FailedNodes"];
      CHECK(failed.value(k.node, std::string("(not listed)")) == k.reason);
    }
  }
}

TEST_CASE("prioritize: 0..10, binpack prefers the fuller node, spread the emptier",
          "[extender][api]") {
  Cluster c;
  c.Create(Node("empty", "trn1.32xlarge", 16, 32));
  c.Create(Node("half", "trn1.32xlarge", 16, 32));
  c.Create(Pod("h", kDev, 8, "half", "0-7"));
  auto app = StartApp(c);
  const json r = Post(app->port(), "/prioritize", NamesArgs(Pod("p", kDev, 4), {"empty", "half"}));
  REQUIRE(r.size() == 2);
  for (const json& h : r) CHECK((h["Score"] >= 0 && h["Score"] <= 10));
  CHECK(r[0]["Host"] == "empty");
  CHECK(r[1]["Score"].get<int>() > r[0]["Score"].get<int>());

  AppOptions o;
  o.listen = "127.0.0.1:0";
  o.policy = Policy::kSpread;
  App spread(o, c.client);
  REQUIRE(spread.Start().ok());
  REQUIRE(Eventually([&] { return spread.ready(); }));
  const json s =
      Post(spread.port(), "/prioritize", NamesArgs(Pod("p", kDev, 4), {"empty", "half"}));
  REQUIRE(s.size() == 2);
  CHECK(s[0]["Score"].get<int>() > s[1]["Score"].get<int>());
  spread.Stop();
}

}  // namespace
}  // namespace neuron::extender::testutil
