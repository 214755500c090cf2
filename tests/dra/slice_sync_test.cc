// SliceSync's worker against the fake apiserver over real HTTP: the first publish, a burst of
// triggers coalesced, a failed build retried with backoff without a new trigger, and the
// periodic resync repairing a slice deleted by someone else.
#include "lib/dra/slice_sync.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "lib/k8s/transport.h"
#include "lib/topology/shapes.h"
#include "nlohmann/json.hpp"
#include "tests/fakes/apiserver/fake_apiserver.h"

namespace neuron::dra {
namespace {

using nlohmann::json;

constexpr char kNode[] = "node-s";
constexpr char kSlice[] = "/apis/resource.k8s.io/v1/resourceslices/node-s-neuron.aws.com-0";

template <typename F>
bool Eventually(F f, absl::Duration within = absl::Seconds(10)) {
  const absl::Time end = absl::Now() + within;
  while (absl::Now() < end) {
    if (f()) return true;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return f();
}

struct Env {
  Env() {
    REQUIRE(fake.Start().ok());
    k8s::ClientConfig cfg;
    cfg.server = fake.url();
    auto transport = k8s::NewHttpTransport(cfg);
    auto other_transport = k8s::NewHttpTransport(cfg);
    REQUIRE(transport.ok());
    REQUIRE(other_transport.ok());
    client = std::make_unique<k8s::RestClient>(*transport);
    someone_else = std::make_unique<k8s::RestClient>(*other_transport);
    REQUIRE(fake.Put(std::string("/api/v1/nodes/") + kNode,
                     {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", kNode}}}})
                .ok());
    publisher = std::make_unique<SlicePublisher>(*client, kNode);
  }
  // Builds a trn1 node's slices; fails while `failures` > 0; counts calls. While `gated`, the
  // first build says so (`in_gated_build`) and waits for `open_gate`.
  SliceSync::Builder Builder() {
    return [this]() -> absl::StatusOr<std::vector<ResourceSliceModel>> {
      ++builds;
      if (gated.load() && !in_gated_build.HasBeenNotified()) {
        in_gated_build.Notify();
        open_gate.WaitForNotification();
      }
      if (failures.load() > 0) {
        --failures;
        return absl::UnavailableError("inventory not scanned yet");
      }
      NodeDeviceInfo n;
      n.node_name = kNode;
      n.shape = topology::FindShape("trn1.32xlarge");
      n.neuron_driver_version = "2.24.7.0";
      n.dra_driver_version = "0.1.0";
      return BuildResourceSlices(n, {});
    };
  }
  SliceSyncOptions Options() {
    SliceSyncOptions o;
    o.retry = {absl::Milliseconds(10), absl::Milliseconds(40), 2.0, 0.0};
    o.on_publish = [this](const absl::Status& s, int64_t generation) {
      std::lock_guard<std::mutex> lock(mu);
      outcomes.push_back(s.ok() ? "ok@" + std::to_string(generation) : s.ToString());
    };
    return o;
  }
  std::vector<std::string> Outcomes() {
    std::lock_guard<std::mutex> lock(mu);
    return outcomes;
  }

  fakes::FakeApiServer fake;
  std::unique_ptr<k8s::RestClient> client;  // the worker's
  // The test's own writes go through another connection, as another client's would (and the
  // worker's transport is never touched from two threads).
  std::unique_ptr<k8s::RestClient> someone_else;
  std::unique_ptr<SlicePublisher> publisher;
  std::atomic<int> builds{0};
  std::atomic<int> failures{0};
  std::atomic<bool> gated{false};
  absl::Notification in_gated_build, open_gate;
  std::mutex mu;
  std::vector<std::string> outcomes;
};

TEST_CASE("the worker publishes at start and coalesces a burst of triggers", "[dra][sync]") {
  Env env;
  SliceSync sync(*env.publisher, env.Builder(), env.Options());
  CHECK_FALSE(sync.published());
  sync.Start();
  REQUIRE(Eventually([&] { return sync.published(); }));
  CHECK(env.fake.Get(kSlice)["spec"]["devices"].size() == 16);
  // The burst lands while a round is in its build (held there), as triggers do when devices
  // change during a publish: however slowly this thread runs, all 99 come during that round.
  const int before = env.builds.load();
  env.gated = true;
  sync.Trigger();
  env.in_gated_build.WaitForNotification();
  for (int i = 0; i < 99; ++i) sync.Trigger();
  env.open_gate.Notify();
  REQUIRE(Eventually([&] { return env.builds.load() - before >= 2; }));
  // Not a wait for a condition: time for a (wrong) round per trigger to show up.
  absl::SleepFor(absl::Milliseconds(200));
  // The round the burst interrupted and one more for all of it: never one per trigger.
  CHECK(env.builds.load() - before == 2);
  // Nothing changed, so nothing new was written: the generation stays.
  REQUIRE(Eventually([&] { return env.Outcomes().size() >= 2; }));
  CHECK(env.Outcomes().back() == "ok@1");
  sync.Stop();
  CHECK(!env.fake.Get(kSlice).is_null());  // slices outlive the worker
}

TEST_CASE("a failed round is retried with backoff, without a trigger", "[dra][sync]") {
  Env env;
  env.failures = 3;
  SliceSync sync(*env.publisher, env.Builder(), env.Options());
  sync.Start();
  REQUIRE(Eventually([&] { return env.Outcomes().size() >= 4; }));
  CHECK(sync.published());
  const std::vector<std::string> got = env.Outcomes();
  REQUIRE(got.size() == 4);
  for (int i = 0; i < 3; ++i) CHECK(got[i].find("inventory not scanned yet") != std::string::npos);
  CHECK(got[3] == "ok@1");
}

TEST_CASE("the resync re-publishes a slice someone deleted", "[dra][sync]") {
  Env env;
  SliceSyncOptions o = env.Options();
  o.resync = absl::Milliseconds(200);
  SliceSync sync(*env.publisher, env.Builder(), o);
  sync.Start();
  REQUIRE(Eventually([&] { return sync.published(); }));
  REQUIRE(env.someone_else
              ->Delete({"resource.k8s.io", "v1", "resourceslices", false}, "",
                       "node-s-neuron.aws.com-0")
              .ok());
  REQUIRE(env.fake.Get(kSlice).is_null());
  // No trigger: only the resync can bring it back.
  CHECK(Eventually([&] { return !env.fake.Get(kSlice).is_null(); }, absl::Seconds(5)));
}

}  // namespace
}  // namespace neuron::dra
