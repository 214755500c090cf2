// Integration tests that need the fake API server's hooks (error injection, compaction, closing
// watches) or a fake clock: retries, 410 relists with no lost event, broken-stream reconnects,
// exec credentials re-run on 401, leader election handover, CRD discovery.
#include <atomic>
#include <map>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "catch2/catch.hpp"
#include "lib/k8s/discovery.h"
#include "lib/k8s/errors.h"
#include "lib/k8s/exec_credential.h"
#include "lib/k8s/informer.h"
#include "lib/k8s/leader_election.h"
#include "lib/k8s/object_fields.h"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/fakes/fake_clock.h"
#include "tests/k8s/test_util.h"

namespace neuron::k8s {
namespace {

using nlohmann::json;
using resources::kConfigMaps;

struct Env {
  fakes::FakeApiServer fake;
  std::unique_ptr<RestClient> client;
  explicit Env(RetryOptions ro = {.max_attempts = 4,
                                  .backoff = {absl::Milliseconds(1), absl::Milliseconds(5), 2, 0}},
               std::shared_ptr<CredentialProvider> creds = nullptr) {
    REQUIRE(fake.Start().ok());
    ClientConfig cfg;
    cfg.server = fake.url();
    cfg.credentials = std::move(creds);
    auto t = NewTransport(cfg, {}, ro);
    REQUIRE(t.ok());
    client = std::make_unique<RestClient>(*t);
  }
};

json Cm(const std::string& name, const std::string& v) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", "ns"}}},
          {"data", {{"v", v}}}};
}

template <typename F>
bool WaitFor(F cond, absl::Duration timeout = absl::Seconds(20)) {
  const absl::Time end = absl::Now() + timeout;
  while (absl::Now() < end) {
    if (cond()) return true;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return cond();
}

TEST_CASE("retries: 5xx and 429 are retried up to max attempts", "[fake]") {
  // Retry sleeps run on a fake clock, moved on whenever the client sleeps: no real waiting, and
  // the Retry-After check does not depend on the machine's speed.
  fakes::FakeClock clock;
  std::atomic<bool> done{false};
  std::thread advancer([&] {
    while (!done) {
      if (clock.sleepers() > 0) clock.Advance(absl::Milliseconds(100));
      absl::SleepFor(absl::Microseconds(200));
    }
  });
  absl::Cleanup stop_advancer = [&] {  // also when a REQUIRE throws
    done = true;
    advancer.join();
  };
  Env env({.max_attempts = 4,
           .backoff = {absl::Milliseconds(1), absl::Milliseconds(5), 2, 0},
           .clock = &clock});
  REQUIRE(env.client->Create(kConfigMaps, "ns", Cm("a", "1")).ok());
  env.fake.InjectError("GET", "/configmaps/a", 503, 2);
  CHECK(env.client->Get(kConfigMaps, "ns", "a").ok());
  CHECK(env.fake.RequestCount("GET", "/configmaps/a") == 3);
  env.fake.InjectError("GET", "/configmaps/a", 429, 1, /*retry_after_s=*/1);
  const absl::Time t0 = clock.Now();
  CHECK(env.client->Get(kConfigMaps, "ns", "a").ok());
  CHECK(clock.Now() - t0 >= absl::Seconds(1));  // Retry-After honoured
  env.fake.InjectError("GET", "/configmaps/a", 500, 10);
  auto r = env.client->Get(kConfigMaps, "ns", "a");
  CHECK(r.status().code() == absl::StatusCode::kUnavailable);
  CHECK(env.fake.RequestCount("GET", "/configmaps/a") == 3 + 2 + 4);
}

// Keeps a view of the world built only from handler callbacks.
struct HandlerView {
  absl::Mutex mu;
  std::map<std::string, std::string> objs;  // name -> data.v
  int adds = 0, updates = 0, deletes = 0;
  EventHandler Handler() {
    return {.on_add =
                [this](const ObjectPtr& o) {
                  absl::MutexLock l(&mu);
                  ++adds;
                  objs[(*o)["metadata"]["name"]] = (*o)["data"]["v"];
                },
            .on_update =
                [this](const ObjectPtr&, const ObjectPtr& n) {
                  absl::MutexLock l(&mu);
                  ++updates;
                  objs[(*n)["metadata"]["name"]] = (*n)["data"]["v"];
                },
            .on_delete =
                [this](const ObjectPtr& o) {
                  absl::MutexLock l(&mu);
                  ++deletes;
                  objs.erase((*o)["metadata"]["name"].get<std::string>());
                }};
  }
  std::map<std::string, std::string> Snapshot() {
    absl::MutexLock l(&mu);
    return objs;
  }
};

std::map<std::string, std::string> ServerView(RestClient& c) {
  std::map<std::string, std::string> out;
  auto all = c.ListAll(kConfigMaps, "ns");
  REQUIRE(all.ok());
  for (auto& o : all->items) out[o["metadata"]["name"]] = o["data"]["v"];
  return out;
}

ReflectorOptions FastReflector() {
  ReflectorOptions o;
  o.backoff = {absl::Milliseconds(50), absl::Milliseconds(200), 2, 0};
  o.page_size = 2;
  return o;
}

TEST_CASE("informer: 410 (HTTP) after missed changes relists with the right deltas", "[fake]") {
  Env env;
  for (const char* n : {"a", "b", "c"}) {
    REQUIRE(env.client->Create(kConfigMaps, "ns", Cm(n, "1")).ok());
  }
  Informer inf(*env.client, kConfigMaps, "ns", FastReflector());
  HandlerView view;
  inf.AddEventHandler(view.Handler());
  inf.Start();
  REQUIRE(inf.WaitForSync(absl::Seconds(20)));
  REQUIRE(WaitFor([&] { return env.fake.OpenWatches() == 1; }));
  // Block the reconnect long enough to miss changes, then expire the old resourceVersion.
  env.fake.InjectError("GET", "/namespaces/ns/configmaps", 503, 2);
  env.fake.CloseWatches();
  REQUIRE(
      env.client->Patch(kConfigMaps, "ns", "a", PatchType::kMerge, {{"data", {{"v", "2"}}}}).ok());
  REQUIRE(env.client->Delete(kConfigMaps, "ns", "b").ok());
  REQUIRE(env.client->Create(kConfigMaps, "ns", Cm("d", "1")).ok());
  env.fake.Compact();
  const auto want = ServerView(*env.client);
  REQUIRE(WaitFor([&] { return view.Snapshot() == want; }));
  CHECK(inf.reflector().lists() >= 2);
  CHECK(inf.store().size() == want.size());
  {
    absl::MutexLock l(&view.mu);
    CHECK(view.deletes == 1);
    CHECK(view.adds == 4);  // a b c, then d
    CHECK(view.updates == 1);
  }
  // The informer keeps watching after the relist.
  REQUIRE(env.client->Create(kConfigMaps, "ns", Cm("e", "1")).ok());
  CHECK(WaitFor([&] { return view.Snapshot().count("e") == 1; }));
}

TEST_CASE("informer: objects are pruned to its fields on list and on watch alike", "[fake]") {
  Env env;
  auto with_bookkeeping = [](const std::string& name) {
    json cm = Cm(name, "1");
    cm["metadata"]["managedFields"] = json::array({{{"manager", "kubectl"}}});
    cm["metadata"]["annotations"] = {{"kubectl.kubernetes.io/last-applied-configuration", "{}"},
                                     {"team", "ml"}};
    return cm;
  };
  REQUIRE(env.client->Create(kConfigMaps, "ns", with_bookkeeping("listed")).ok());
  Informer inf(*env.client, kConfigMaps, "ns", FastReflector());
  inf.SetFields(WithoutBookkeeping());
  inf.Start();
  REQUIRE(inf.WaitForSync(absl::Seconds(20)));
  REQUIRE(env.client->Create(kConfigMaps, "ns", with_bookkeeping("watched")).ok());
  REQUIRE(WaitFor([&] { return inf.store().Get("ns/watched") != nullptr; }));
  for (const char* key : {"ns/listed", "ns/watched"}) {
    CAPTURE(key);
    const ObjectPtr o = inf.store().Get(key);
    REQUIRE(o != nullptr);
    CHECK_FALSE((*o)["metadata"].contains("managedFields"));
    CHECK((*o)["metadata"]["annotations"] == json{{"team", "ml"}});
    CHECK((*o)["data"] == json{{"v", "1"}});
    CHECK_FALSE((*o)["metadata"].value("resourceVersion", "").empty());
  }
  // A narrower list: identity only.
  Informer names(*env.client, kConfigMaps, "ns", FastReflector());
  names.SetFields(JsonKeep::Of({IdentityMetadata()}));
  names.Start();
  REQUIRE(names.WaitForSync(absl::Seconds(20)));
  const ObjectPtr o = names.store().Get("ns/listed");
  REQUIRE(o != nullptr);
  CHECK_FALSE(o->contains("data"));
  CHECK((*o)["metadata"]["name"] == "listed");
  CHECK_FALSE((*o)["metadata"].contains("annotations"));
}

TEST_CASE("informer: in-stream 410 ERROR events under churn lose nothing", "[fake]") {
  Env env;
  Informer inf(*env.client, kConfigMaps, "ns", FastReflector());
  HandlerView view;
  inf.AddEventHandler(view.Handler());
  inf.Start();
  REQUIRE(inf.WaitForSync(absl::Seconds(20)));
  for (int i = 0; i < 60; ++i) {
    const std::string name = absl::StrCat("o", i % 13);
    auto got = env.client->Get(kConfigMaps, "ns", name);
    if (absl::IsNotFound(got.status())) {
      REQUIRE(env.client->Create(kConfigMaps, "ns", Cm(name, std::to_string(i))).ok());
    } else if (i % 3 == 0) {
      REQUIRE(env.client->Delete(kConfigMaps, "ns", name).ok());
    } else {
      REQUIRE(env.client
                  ->Patch(kConfigMaps, "ns", name, PatchType::kMerge,
                          {{"data", {{"v", std::to_string(i)}}}})
                  .ok());
    }
    if (i % 10 == 5) env.fake.Compact(/*kill_open_watches=*/true);
  }
  const auto want = ServerView(*env.client);
  CHECK(WaitFor([&] { return view.Snapshot() == want; }));
  CHECK(inf.reflector().lists() >= 2);
}

TEST_CASE("watch: a broken stream reconnects and resumes", "[fake]") {
  Env env;
  Informer inf(*env.client, kConfigMaps, "ns", FastReflector());
  HandlerView view;
  inf.AddEventHandler(view.Handler());
  inf.Start();
  REQUIRE(inf.WaitForSync(absl::Seconds(20)));
  for (int round = 0; round < 3; ++round) {
    // The reflector's next watch has started (the previous one it saw end) and is the one open
    // on the server: closing before that would close the old stream twice.
    REQUIRE(WaitFor(
        [&] { return inf.reflector().watches() >= round + 1 && env.fake.OpenWatches() == 1; }));
    env.fake.CloseWatches();
    REQUIRE(env.client->Create(kConfigMaps, "ns", Cm(absl::StrCat("r", round), "1")).ok());
  }
  CHECK(WaitFor([&] { return view.Snapshot().size() == 3; }));
  CHECK(inf.reflector().lists() == 1);  // resumed, never relisted
  CHECK(WaitFor([&] { return inf.reflector().watches() >= 4; }));
}

TEST_CASE("exec credentials: token sent, plugin re-run on 401", "[fake]") {
  testutil::TempDir dir;
  const std::string script = testutil::WriteExecPlugin(dir.path(), "2999-01-01T00:00:00Z");
  auto provider = std::make_shared<ExecCredentialProvider>(
      ExecConfig{.api_version = "client.authentication.k8s.io/v1beta1",
                 .command = script,
                 .args = {"x", "tok"}},
      Clock::Real());
  Env env({.max_attempts = 1}, provider);
  REQUIRE(env.client->Create(kConfigMaps, "ns", Cm("a", "1")).ok());
  CHECK(provider->runs() == 1);
  env.fake.InjectError("GET", "/configmaps/a", 401, 1);
  CHECK(env.client->Get(kConfigMaps, "ns", "a").ok());  // refreshed and retried once
  CHECK(provider->runs() == 2);
  env.fake.InjectError("GET", "/configmaps/a", 401, 2);
  CHECK(env.client->Get(kConfigMaps, "ns", "a").status().code() ==
        absl::StatusCode::kUnauthenticated);
}

TEST_CASE("discovery: a CRD's API becomes served", "[fake]") {
  Env env;
  Discovery d(*env.client);
  CHECK(!*d.IsServed("nfd.k8s-sigs.io", "v1alpha1", "nodefeaturerules"));
  json crd = {
      {"apiVersion", "apiextensions.k8s.io/v1"},
      {"kind", "CustomResourceDefinition"},
      {"metadata", {{"name", "nodefeaturerules.nfd.k8s-sigs.io"}}},
      {"spec",
       {{"group", "nfd.k8s-sigs.io"},
        {"scope", "Cluster"},
        {"names",
         {{"plural", "nodefeaturerules"},
          {"singular", "nodefeaturerule"},
          {"kind", "NodeFeatureRule"},
          {"listKind", "NodeFeatureRuleList"}}},
        {"versions", json::array({{{"name", "v1alpha1"},
                                   {"served", true},
                                   {"storage", true},
                                   {"schema",
                                    {{"openAPIV3Schema",
                                      {{"type", "object"},
                                       {"x-kubernetes-preserve-unknown-fields", true}}}}}}})}}}};
  REQUIRE(env.client->Create(resources::kCRDs, "", crd).ok());
  d.Invalidate();
  auto ref = d.Find("nfd.k8s-sigs.io", "v1alpha1", "nodefeaturerules");
  REQUIRE(ref.ok());
  REQUIRE(ref->has_value());
  CHECK(!(*ref)->namespaced);
  CHECK(*d.GroupVersions("nfd.k8s-sigs.io") == std::vector<std::string>{"v1alpha1"});
}

}  // namespace
}  // namespace neuron::k8s
