// Leader election against the fake API server, time driven by a fake clock.
#include "lib/k8s/leader_election.h"

#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "catch2/catch.hpp"
#include "lib/k8s/k8s_time.h"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/fakes/fake_clock.h"

namespace neuron::k8s {
namespace {

struct Cluster {
  fakes::FakeApiServer fake;
  std::unique_ptr<RestClient> client;
  Cluster() {
    REQUIRE(fake.Start().ok());
    ClientConfig cfg;
    cfg.server = fake.url();
    client = std::make_unique<RestClient>(*NewTransport(cfg, {}, {.max_attempts = 1}));
  }
  nlohmann::json Lease() const {
    return fake.Get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/neuron");
  }
};

LeaderElectionConfig Cfg(const std::string& id, Clock* clock) {
  LeaderElectionConfig c;
  c.lease_namespace = "kube-system";
  c.lease_name = "neuron";
  c.identity = id;
  c.clock = clock;
  c.seed = id == "a" ? 1 : 2;
  return c;
}

TEST_CASE("leader election: expiry judged by local observation time", "[leader]") {
  Cluster cl;
  fakes::FakeClock clock;
  LeaderElector a(*cl.client, Cfg("a", &clock));
  LeaderElector b(*cl.client, Cfg("b", &clock));
  REQUIRE(a.Validate().ok());
  REQUIRE(a.TryAcquireOrRenew());  // creates the lease
  auto lease = cl.Lease();
  CHECK(lease["spec"]["holderIdentity"] == "a");
  CHECK(lease["spec"]["leaseDurationSeconds"] == 15);
  CHECK(lease["spec"]["leaseTransitions"] == 0);
  const std::string renew = lease["spec"]["renewTime"];
  CHECK(renew.size() == 27);  // 2006-01-02T15:04:05.000000Z
  CHECK(ParseTime(renew).ok());

  CHECK(!b.TryAcquireOrRenew());  // b first sees the record now
  CHECK(b.ObservedLeader() == "a");
  clock.Advance(absl::Seconds(10));
  REQUIRE(a.TryAcquireOrRenew());  // renewal changes the record: b's timer restarts
  CHECK(cl.Lease()["spec"]["leaseTransitions"] == 0);
  clock.Advance(absl::Seconds(10));
  CHECK(!b.TryAcquireOrRenew());  // 20 s since b saw it first, but only 10 s since it changed
  clock.Advance(absl::Seconds(14));
  CHECK(!b.TryAcquireOrRenew());  // 14 s < 15 s since b saw the change... (b saw at +20)
  clock.Advance(absl::Seconds(2));
  CHECK(b.TryAcquireOrRenew());  // a stopped renewing: expired
  lease = cl.Lease();
  CHECK(lease["spec"]["holderIdentity"] == "b");
  CHECK(lease["spec"]["leaseTransitions"] == 1);
  CHECK(!a.TryAcquireOrRenew());  // a sees b's fresh record

  LeaderElectionConfig bad = Cfg("c", &clock);
  bad.renew_deadline = absl::Seconds(20);
  CHECK(LeaderElector(*cl.client, bad).Validate().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("leader election: handover between two running electors on release", "[leader]") {
  Cluster cl;
  fakes::FakeClock clock;
  absl::Mutex mu;
  std::vector<std::string> log;
  auto callbacks = [&](const std::string& id) {
    return LeaderCallbacks{.on_started_leading =
                               [&, id] {
                                 absl::MutexLock l(&mu);
                                 log.push_back(id + " started");
                               },
                           .on_stopped_leading =
                               [&, id] {
                                 absl::MutexLock l(&mu);
                                 log.push_back(id + " stopped");
                               },
                           .on_new_leader =
                               [&, id](const std::string& leader) {
                                 absl::MutexLock l(&mu);
                                 log.push_back(id + " sees " + leader);
                               }};
  };
  LeaderElectionConfig ca = Cfg("a", &clock), cb = Cfg("b", &clock);
  ca.callbacks = callbacks("a");
  cb.callbacks = callbacks("b");
  LeaderElector a(*cl.client, ca);
  LeaderElector b(*cl.client, cb);
  absl::Status ra, rb;
  std::thread ta([&] { ra = a.Run(); });
  auto wait = [](auto cond) {
    const absl::Time end = absl::Now() + absl::Seconds(20);
    while (!cond() && absl::Now() < end) absl::SleepFor(absl::Milliseconds(2));
    return cond();
  };
  REQUIRE(wait([&] { return a.IsLeader() && clock.sleepers() == 1; }));
  std::thread tb([&] { rb = b.Run(); });
  REQUIRE(wait([&] { return clock.sleepers() == 2; }));  // a renewing, b waiting
  CHECK(!b.IsLeader());
  a.Stop();
  // Drive time until b takes over (a releases with leaseDurationSeconds=1 on its next wake).
  REQUIRE(wait([&] {
    if (b.IsLeader()) return true;
    if (clock.sleepers() > 0) clock.Advance(absl::Seconds(1));
    return false;
  }));
  ta.join();
  CHECK(ra.ok());
  auto lease = cl.Lease();
  CHECK(lease["spec"]["holderIdentity"] == "b");
  CHECK(lease["spec"]["leaseTransitions"] == 1);
  b.Stop();
  REQUIRE(wait([&] {
    if (clock.sleepers() > 0) clock.Advance(absl::Seconds(1));
    return !b.IsLeader();
  }));
  tb.join();
  CHECK(rb.ok());
  lease = cl.Lease();
  CHECK(lease["spec"]["leaseDurationSeconds"] == 1);  // released
  CHECK(!lease["spec"].contains("holderIdentity"));
  // Each elector's callbacks come in order. Across electors there is no order: a runs its
  // on_stopped_leading after releasing, and b may take the lease before that callback ran.
  absl::MutexLock l(&mu);
  std::vector<std::string> of_a, of_b;
  for (const std::string& e : log) (e[0] == 'a' ? of_a : of_b).push_back(e);
  CHECK(of_a == std::vector<std::string>{"a sees a", "a started", "a stopped"});
  CHECK(of_b == std::vector<std::string>{"b sees a", "b sees b", "b started", "b stopped"});
}

}  // namespace
}  // namespace neuron::k8s
