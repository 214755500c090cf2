// File: tests/extender/decide_test.cc
// Cluster view + filter/prioritize rules for every family (inf1, inf2 incl. the inf2.24xlarge
// chain, trn1, trn2 at LNC 1 and 2), both resources sharing silicon, unknown holdings, and bind
// reservations (idempotent, disjoint, released by the watch, expiring).
#include "lib/extender/decide.h"

#include <random>
#include <set>
#include <string>

#include "catch2/catch.hpp"
#include "lib/extender/cluster_view.h"
#include "tests/extender/view_test_util.h"
#include "tests/fakes/fake_clock.h"

namespace neuron::extender::testutil {
namespace {

NeuronRequest Dev(int n) { return {n, 0}; }
NeuronRequest Cores(int n) { return {0, n}; }

PodInfo P(const std::string& name, NeuronRequest r) {
  PodInfo p;
  p.ns = "ml";
  p.name = name;
  p.uid = "uid-" + name;  // as testutil::Pod
  p.request = r;
  return p;
}

long FreeDevices(const ClusterView& v, const std::string& node) {
  std::optional<NodeState> st = v.State(node);
  return st ? std::count(st->free_devices.begin(), st->free_devices.end(), true) : -1;
}

Verdict On(const ClusterView& v, const std::string& node, NeuronRequest r) {
  std::optional<NodeState> st = v.State(node);
  return Evaluate(st ? &*st : nullptr, r);
}

TEST_CASE("trn1.32xlarge: 1, 4, 8 or 16 devices, aligned", "[extender][decide]") {
  ClusterView v;
  v.UpsertNode(Node("t", "trn1.32xlarge", 16, 32));
  for (int k : {1, 4, 8, 16}) CHECK(On(v, "t", Dev(k)).fits);
  Verdict bad = On(v, "t", Dev(3));
  CHECK_FALSE(bad.fits);
  CHECK(bad.unresolvable);
  CHECK(bad.reason == "trn1.32xlarge takes 1, 4, 8 or 16 devices; asked 3");
  CHECK(On(v, "t", Dev(17)).reason == "trn1.32xlarge has 16 devices; asked 17");

  // One core held on device 5: that device is not a free `neuron`; rows 0, 2, 3 stay whole.
  v.UpsertPod(Pod("c", kCore, 1, "t", "10"));
  std::optional<NodeState> st = v.State("t");
  REQUIRE(st);
  CHECK_FALSE(st->free_devices[5]);
  CHECK(st->free_devices[4]);
  CHECK_FALSE(st->free_cores[10]);
  CHECK(st->free_cores[11]);
  CHECK(On(v, "t", Dev(8)).fits);  // {8-15}
  Verdict full = On(v, "t", Dev(16));
  CHECK_FALSE(full.fits);
  CHECK_FALSE(full.unresolvable);
  CHECK(full.reason == "15 of 16 devices free; asked 16");

  // Devices 0-3 and 8-11 held as `neuron`: no free half is left, only rows.
  v.UpsertPod(Pod("a", kDev, 4, "t", "0-3"));
  v.UpsertPod(Pod("b", kDev, 4, "t", "8,9,10,11"));
  CHECK(On(v, "t", Dev(8)).reason == "7 of 16 devices free; asked 8");
  st = v.State("t");
  for (int c = 0; c < 8; ++c) CHECK_FALSE(st->free_cores[c]);  // cores of held devices
}

TEST_CASE("trn1.32xlarge: one device held per row leaves no row", "[extender][decide]") {
  ClusterView v;
  v.UpsertNode(Node("t", "trn1.32xlarge", 16, 32));
  for (const char* id : {"0", "5", "10", "15"}) {
    v.UpsertPod(Pod(std::string("p") + id, kDev, 1, "t", id));
  }
  Verdict frag = On(v, "t", Dev(4));
  CHECK_FALSE(frag.fits);
  CHECK_FALSE(frag.unresolvable);
  CHECK(frag.reason == "largest connected free block is 1 device; asked 4");
  CHECK(frag.category == "fragmented");
}

TEST_CASE("inf2.24xlarge is a chain without wrap; inf2.48xlarge a ring", "[extender][decide]") {
  ClusterView v;
  v.UpsertNode(Node("chain", "inf2.24xlarge", 6, 12));
  v.UpsertNode(Node("ring", "inf2.48xlarge", 12, 24));
  v.UpsertPod(Pod("x", kDev, 1, "chain", "2"));
  CHECK(On(v, "chain", Dev(3)).fits);  // {3,4,5}
  v.UpsertPod(Pod("y", kDev, 1, "chain", "5"));
  Verdict frag = On(v, "chain", Dev(3));
  CHECK_FALSE(frag.fits);
  CHECK(frag.reason == "largest connected free block is 2 devices; asked 3");
  v.UpsertPod(Pod("z", kDev, 8, "ring", "2-9"));
  CHECK(On(v, "ring", Dev(4)).fits);  // {10,11,0,1} wraps
}

TEST_CASE("inf1 and single-device shapes", "[extender][decide]") {
  ClusterView v;
  v.UpsertNode(Node("i1", "inf1.6xlarge", 4, 16));
  v.UpsertNode(Node("one", "inf2.xlarge", 1, 2));
  CHECK(On(v, "i1", Dev(3)).fits);
  CHECK(On(v, "i1", Cores(16)).fits);
  CHECK(On(v, "one", Dev(2)).reason == "inf2.xlarge has 1 device; asked 2");
  CHECK(On(v, "one", Dev(2)).unresolvable);
}

TEST_CASE("trn2.48xlarge at LNC 2 (default) and LNC 1", "[extender][decide]") {
  ClusterView v;
  v.UpsertNode(Node("lnc2", "trn2.48xlarge", 16, 64));
  v.UpsertNode(Node("lnc1", "trn2.48xlarge", 16, 128));
  v.UpsertNode(
      Node("label1", "trn2.48xlarge", 16, 0, {{"feature.node.kubernetes.io/aws-neuron-lnc", "1"}}));
  CHECK(v.State("lnc2")->info.shape->total_cores() == 64);
  CHECK(v.State("lnc1")->info.shape->total_cores() == 128);
  CHECK(v.State("label1")->info.shape->lnc == 1);
  Verdict big = On(v, "lnc2", Cores(100));
  CHECK(big.unresolvable);
  CHECK(big.reason == "trn2.48xlarge has 64 cores; asked 100");
  CHECK(On(v, "lnc1", Cores(100)).fits);  // 13 devices inside the 16-device group
  CHECK(On(v, "lnc1", Cores(64)).fits);
}

TEST_CASE("shape from NFD labels, else capacity; no Neuron at all", "[extender][decide]") {
  ClusterView v;
  v.UpsertNode(Node("nfd", "", 0, 0,
                    {{"feature.node.kubernetes.io/aws-neuron-instance-type", "trn1.32xlarge"}}));
  v.UpsertNode(Node("cap", "", 4, 8));
  v.UpsertNode(Node("cpu", "m5.large"));
  CHECK(v.State("nfd")->info.source == "nfd");
  CHECK(On(v, "nfd", Dev(3)).unresolvable);
  CHECK(v.State("cap")->info.source == "capacity");
  CHECK(On(v, "cap", Dev(3)).fits);
  Verdict none = On(v, "cpu", Dev(1));
  CHECK(none.unresolvable);
  CHECK(none.reason == "node has no Neuron devices");
  CHECK_FALSE(On(v, "gone", Dev(1)).unresolvable);
  CHECK(On(v, "gone", Dev(1)).category == "unknown_node");
}

TEST_CASE("pods without annotations hold unknown IDs; terminated pods hold none",
          "[extender][decide]") {
  ClusterView v;
  v.UpsertNode(Node("t", "trn1.32xlarge", 16, 32));
  v.UpsertPod(Pod("anon", kDev, 8, "t"));
  std::optional<NodeState> st = v.State("t");
  CHECK(st->unknown_devices == 8);
  CHECK(std::count(st->free_devices.begin(), st->free_devices.end(), true) == 8);
  CHECK_FALSE(On(v, "t", Dev(16)).fits);
  json done = Pod("done", kDev, 8, "t", "8-15");
  done["status"]["phase"] = "Succeeded";
  v.UpsertPod(done);
  CHECK(On(v, "t", Dev(8)).fits);
  v.DeletePod(Pod("anon", kDev, 8, "t"));
  CHECK(On(v, "t", Dev(16)).fits);
}

PodHoldings Held(const json& pod) { return HoldingsFor(*ParsePod(pod)); }

TEST_CASE("a full list replaces the view: what it lacks is gone", "[extender][decide]") {
  ClusterView v;
  v.ReplaceNodes({ParseNode(Node("a", "trn1.32xlarge", 16, 32)),
                  ParseNode(Node("b", "trn1.32xlarge", 16, 32))});
  v.ReplacePods({Held(Pod("p1", kDev, 4, "a", "0-3")), Held(Pod("p2", kDev, 4, "b", "0-3")),
                 Held(Pod("cpu", "cpu", 1, "a"))});
  CHECK(v.node_count() == 2);
  CHECK(v.pod_count() == 2);  // the CPU-only pod holds nothing
  CHECK(FreeDevices(v, "a") == 12);

  // Relist after a 410: p2 was deleted and node b removed while the watch was down; p1 moved on
  // to other IDs; p3 is new.
  v.ReplaceNodes({ParseNode(Node("a", "trn1.32xlarge", 16, 32))});
  v.ReplacePods({Held(Pod("p1", kDev, 8, "a", "8-15")), Held(Pod("p3", kCore, 2, "a", "0,1"))});
  CHECK(v.node_count() == 1);
  CHECK(v.pod_count() == 2);
  CHECK_FALSE(v.State("b").has_value());
  std::optional<NodeState> st = v.State("a");
  REQUIRE(st.has_value());
  CHECK(std::count(st->free_devices.begin(), st->free_devices.end(), true) == 7);  // 1-7
  CHECK_FALSE(st->free_devices[0]);  // its cores are held
  CHECK(st->free_devices[1]);

  v.ReplacePods({});
  CHECK(v.pod_count() == 0);
  CHECK(FreeDevices(v, "a") == 16);
}

TEST_CASE("unhealthy devices reduce allocatable", "[extender][decide]") {
  ClusterView v;
  json n = Node("t", "trn1.32xlarge", 16, 32);
  n["status"]["allocatable"][kDev] = "12";
  v.UpsertNode(n);
  Verdict r = On(v, "t", Dev(16));
  CHECK_FALSE(r.fits);
  CHECK_FALSE(r.unresolvable);
  CHECK(r.category == "unhealthy");
}

TEST_CASE("filter and prioritize over ExtenderArgs", "[extender][decide]") {
  ClusterView v;
  v.UpsertNode(Node("empty", "trn1.32xlarge", 16, 32));
  v.UpsertNode(Node("busy", "trn1.32xlarge", 16, 32));
  v.UpsertPod(Pod("a", kDev, 8, "busy", "0-7"));
  ExtenderArgs args;
  args.pod.ns = "ml";
  args.pod.name = "p";
  args.pod.request = Dev(4);
  args.node_names = std::vector<std::string_view>{"empty", "busy", "nowhere"};
  FilterResult r = Filter(v, args);
  CHECK(*r.node_names == std::vector<std::string>{"empty", "busy"});
  CHECK(r.failed.count("nowhere") == 1);
  std::vector<HostPriority> bin = Prioritize(v, args, Policy::kBinpack);
  std::vector<HostPriority> spr = Prioritize(v, args, Policy::kSpread);
  REQUIRE(bin.size() == 3);
  CHECK(bin[1].score > bin[0].score);  // binpack fills the busy node
  CHECK(spr[0].score > spr[1].score);  // spread prefers the empty one
  CHECK(bin[2].score == 0);
  for (const auto& h : bin) CHECK((h.score >= 0 && h.score <= 10));

  args.pod.request = {};  // not ours: everything passes
  r = Filter(v, args);
  CHECK(r.node_names->size() == 3);
}

TEST_CASE("reservations: idempotent, disjoint, released by the watch, expiring",
          "[extender][decide]") {
  fakes::FakeClock clock;
  ClusterView v(&clock);
  v.UpsertNode(Node("t", "trn1.32xlarge", 16, 32));
  PodInfo p1 = P("p1", Dev(4));
  PodInfo p2 = P("p2", Dev(4));
  auto c1 = v.ChooseAndReserve("t", p1, absl::Seconds(30));
  REQUIRE(c1.ok());
  auto again = v.ChooseAndReserve("t", p1, absl::Seconds(30));
  REQUIRE(again.ok());
  CHECK(again->ids == c1->ids);
  auto c2 = v.ChooseAndReserve("t", p2, absl::Seconds(30));
  REQUIRE(c2.ok());
  std::set<int> all(c1->ids.begin(), c1->ids.end());
  for (int id : c2->ids) CHECK(all.insert(id).second);
  CHECK(v.reservation_count() == 2);
  // The watch shows p1's annotation: reservation gone, IDs still taken.
  v.UpsertPod(Pod("p1", kDev, 4, "t", assignment::FormatIdList(c1->ids)));
  CHECK(v.reservation_count() == 1);
  CHECK(FreeDevices(v, "t") == 8);
  clock.Advance(absl::Seconds(31));
  CHECK(FreeDevices(v, "t") == 12);
  PodInfo huge = P("h", Dev(16));
  CHECK(v.ChooseAndReserve("t", huge, absl::Seconds(30)).status().code() ==
        absl::StatusCode::kFailedPrecondition);
  CHECK(v.ChooseAndReserve("nowhere", p2, absl::Seconds(30)).status().code() ==
        absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace neuron::extender::testutil

namespace neuron::extender::testutil {
namespace {

// The cached Snapshot() must always equal a fresh State(): random pod, node and reservation
// changes (seeded, so a failure reproduces), each followed by a comparison on every node.
TEST_CASE("snapshots follow every change of pods, nodes and reservations", "[extender][decide]") {
  fakes::FakeClock clock;
  ClusterView v(&clock);
  const std::vector<std::string> nodes = {"t1", "t2", "i2"};
  v.UpsertNode(Node("t1", "trn1.32xlarge", 16, 32));
  v.UpsertNode(Node("t2", "trn2.48xlarge", 16, 64));
  v.UpsertNode(Node("i2", "inf2.48xlarge", 12, 24));
  std::mt19937 rng(42);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  for (int step = 0; step < 400; ++step) {
    const std::string node = nodes[pick(3)];
    const std::string name = "p" + std::to_string(pick(12));
    switch (pick(5)) {
      case 0:  // a pod holding known IDs (possibly moving)
        v.UpsertPod(Pod(name, kDev, 1, node, std::to_string(pick(12))));
        break;
      case 1:  // a pod without annotations
        v.UpsertPod(Pod(name, kCore, 1 + pick(3), node));
        break;
      case 2:
        v.DeletePod(Pod(name, kDev, 1, node));
        break;
      case 3: {  // a bind reservation, some expiring
        (void)v.ChooseAndReserve(node, P(name, Cores(1 + pick(2))), absl::Seconds(1 + pick(3)));
        break;
      }
      default:
        clock.Advance(absl::Seconds(1));
        break;
    }
    for (const std::string& n : nodes) {
      (void)v.Snapshot(n);  // fill the cache, then compare it after the next change
      std::shared_ptr<const NodeState> snap = v.Snapshot(n, "ml/new");
      std::optional<NodeState> fresh = v.State(n, "ml/new");
      REQUIRE(snap != nullptr);
      REQUIRE(fresh.has_value());
      CAPTURE(step, n);
      CHECK(snap->free_devices == fresh->free_devices);
      CHECK(snap->free_cores == fresh->free_cores);
      CHECK(snap->unknown_devices == fresh->unknown_devices);
      CHECK(snap->unknown_cores == fresh->unknown_cores);
      CHECK(Evaluate(snap.get(), Dev(4)).fits == Evaluate(&*fresh, Dev(4)).fits);
    }
  }
}

}  // namespace
}  // namespace neuron::extender::testutil
