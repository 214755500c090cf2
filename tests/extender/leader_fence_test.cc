// File: tests/extender/leader_fence_test.cc
// Two scheduler replicas, each with its extender: a handover must never let the new leader's
// extender hand out IDs the old one bound while its watch trailed. The fence is tested alone
// (fake clock: when it reads the Lease, when it relists) and end to end: two extender Apps on
// one fake kube-apiserver, the standby's pod watch held down while the leader binds, then the
// Lease moves and the new leader binds more pods onto the same node.
#include "lib/extender/leader_fence.h"

#include <atomic>
#include <set>
#include <string>

#include "catch2/catch.hpp"
#include "lib/assignment/ids.h"
#include "tests/extender/api_test_util.h"
#include "tests/extender/view_test_util.h"
#include "tests/fakes/fake_clock.h"

namespace neuron::extender::testutil {
namespace {

const k8s::ResourceRef kLeases{"coordination.k8s.io", "v1", "leases", true};

json Lease(const std::string& holder, int transitions) {
  return {{"apiVersion", "coordination.k8s.io/v1"},
          {"kind", "Lease"},
          {"metadata", {{"name", "neuron-scheduler"}, {"namespace", "kube-system"}}},
          {"spec",
           {{"holderIdentity", holder},
            {"leaseDurationSeconds", 15},
            {"acquireTime", "2026-11-27T10:00:0" + std::to_string(transitions) + ".000000Z"},
            {"leaseTransitions", transitions}}}};
}

void MoveLease(Cluster& c, const std::string& holder, int transitions) {
  REQUIRE(c.server
              .Put("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/"
                   "neuron-scheduler",
                   Lease(holder, transitions))
              .ok());
}

TEST_CASE("the fence reads the Lease after a quiet spell and relists on a new term",
          "[extender][fence]") {
  Cluster c;
  REQUIRE(c.client->Create(kLeases, "kube-system", Lease("sched-a_1", 0)).ok());
  fakes::FakeClock clock;
  int relists = 0;
  LeaderFence fence(
      *c.client, "kube-system", "neuron-scheduler",
      [&] {
        ++relists;
        return absl::OkStatus();
      },
      &clock, absl::Seconds(1));
  fence.Init();
  const auto lease_reads = [&] { return c.server.RequestCount("GET", "/leases/neuron-scheduler"); };
  const size_t reads0 = lease_reads();
  // First call ever: quiet, so the Lease is read; same term as the first list: no relist.
  REQUIRE(fence.Admit().ok());
  CHECK(lease_reads() == reads0 + 1);
  CHECK(relists == 0);
  // Called steadily: no API request at all.
  for (int i = 0; i < 20; ++i) {
    clock.Advance(absl::Milliseconds(100));
    REQUIRE(fence.Admit().ok());
  }
  CHECK(lease_reads() == reads0 + 1);
  // A handover while this replica was quiet: the next call relists first.
  MoveLease(c, "sched-b_2", 1);
  clock.Advance(absl::Seconds(5));
  REQUIRE(fence.Admit().ok());
  CHECK(relists == 1);
  CHECK(fence.resyncs() == 1);
  // Quiet again, same term: read, no relist.
  clock.Advance(absl::Seconds(5));
  REQUIRE(fence.Admit().ok());
  CHECK(relists == 1);
}

TEST_CASE("a failed relist is not answered and is tried again", "[extender][fence]") {
  Cluster c;
  REQUIRE(c.client->Create(kLeases, "kube-system", Lease("sched-a_1", 0)).ok());
  fakes::FakeClock clock;
  bool fail = true;
  LeaderFence fence(
      *c.client, "kube-system", "neuron-scheduler",
      [&] { return fail ? absl::UnavailableError("apiserver down") : absl::OkStatus(); }, &clock);
  fence.Init();
  MoveLease(c, "sched-b_2", 1);
  absl::Status s = fence.Admit();
  CHECK(absl::IsUnavailable(s));
  CHECK(std::string(s.message()).find("apiserver down") != std::string::npos);
  // The very next call, however soon, tries again.
  clock.Advance(absl::Milliseconds(10));
  fail = false;
  CHECK(fence.Admit().ok());
  CHECK(fence.resyncs() == 1);
}

// Binds `n` pods named <prefix>-<i> asking one device each onto trn1-a through `app`; returns the
// IDs each got.
std::vector<std::string> BindMany(Cluster& c, App& app, const std::string& prefix, int n) {
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) {
    const std::string name = prefix + "-" + std::to_string(i);
    c.Create(Pod(name, kDev, 1));
    const json r = Post(app.port(), "/bind", BindArgs("ml", name, "trn1-a"));
    REQUIRE(r["Error"] == "");
    ids.push_back(c.GetPod("ml", name)["metadata"]["annotations"]["AWS_NEURON_IDS"]);
  }
  return ids;
}

std::unique_ptr<App> StartReplica(Cluster& c, bool fenced) {
  AppOptions o;
  o.listen = "127.0.0.1:0";
  if (fenced) o.leader_lease = "kube-system/neuron-scheduler";
  auto app = std::make_unique<App>(o, c.client);
  REQUIRE(app->Start().ok());
  REQUIRE(Eventually([&] { return app->ready(); }));
  return app;
}

// Leader A binds 6 pods while the standby B's pod watch is down (every watch request fails,
// as while a watch trails; unfenced, every pod list too), then the Lease moves to B and B binds 6
// more on the same node. Returns how many IDs were handed out twice.
size_t HandOver(bool fenced) {
  Cluster c;
  c.Create(Node("trn1-a", "trn1.32xlarge", 16, 32));
  REQUIRE(c.client->Create(kLeases, "kube-system", Lease("sched-a_1", 0)).ok());
  auto a = StartReplica(c, fenced);
  auto b = StartReplica(c, fenced);
  REQUIRE(Eventually([&] { return c.server.OpenWatches() == 4; }));
  // Unfenced, lists fail too: otherwise B's informer may relist on its own before its first
  // bind (it does under ASan), and the teeth would depend on timing.
  c.server.InjectError("GET", fenced ? "watch=" : "/api/v1/pods", 500, 1000000);
  c.server.CloseWatches();
  std::vector<std::string> ids = BindMany(c, *a, "a", 6);
  MoveLease(c, "sched-b_2", 1);
  a.reset();  // the old leader's pod is gone
  for (const std::string& id : BindMany(c, *b, "b", 6)) ids.push_back(id);
  std::multiset<int> seen;
  for (const std::string& s : ids) {
    absl::StatusOr<std::vector<int>> parsed = assignment::ParseIdList(s);
    REQUIRE(parsed.ok());
    seen.insert(parsed->begin(), parsed->end());
  }
  size_t twice = 0;
  for (int id : std::set<int>(seen.begin(), seen.end())) twice += seen.count(id) > 1 ? 1 : 0;
  return twice;
}

TEST_CASE("after a handover the new leader's extender never hands out an ID twice",
          "[extender][fence]") {
  CHECK(HandOver(/*fenced=*/true) == 0);
}

TEST_CASE("without the fence the same handover hands IDs out twice (the test has teeth)",
          "[extender][fence]") {
  CHECK(HandOver(/*fenced=*/false) > 0);
}

}  // namespace
}  // namespace neuron::extender::testutil
