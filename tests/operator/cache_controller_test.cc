// File: tests/operator/cache_controller_test.cc
// The compiled-model cache controller against the in-process fake kube-apiserver with the
// repository's own cache CRDs: the in-use finalizer, tags resolved into status (and re-resolved,
// and a registry error keeping the old digest), a verify pin refusing a moved tag, node reports
// summed into counts and Ready, and deletion held while pods use the cache.
#include "lib/operator/cache_controller.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "tests/operator/operator_test_util.h"
#include "tests/testing/subprocess.h"

namespace neuron::op {
namespace {

using neuron::testing::Eventually;
using nlohmann::json;
using namespace testutil;  // NOLINT(google-build-using-namespace): test helpers

const std::string kD1 = "sha256:" + std::string(64, '1');
const std::string kD2 = "sha256:" + std::string(64, '2');
constexpr char kTeam[] = "team";

// Answers every resolve with `digest` (or `error`), counting the calls.
class FakeResolver : public DigestResolver {
 public:
  absl::StatusOr<std::string> Resolve(const cache::CacheSpec& spec) override {
    absl::MutexLock lock(&mu_);
    ++calls_;
    last_image_ = spec.image;
    if (!error_.ok()) return error_;
    return digest_;
  }
  void Answer(std::string digest, absl::Status error = absl::OkStatus()) {
    absl::MutexLock lock(&mu_);
    digest_ = std::move(digest);
    error_ = std::move(error);
  }
  int calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

 private:
  absl::Mutex mu_;
  std::string digest_ ABSL_GUARDED_BY(mu_);
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
  std::string last_image_ ABSL_GUARDED_BY(mu_);
};

std::string CachePath(const std::string& name) {
  return std::string("/apis/k8s.aws/v1alpha1/namespaces/") + kTeam + "/neuroncaches/" + name;
}

struct Fixture {
  Fixture() {
    cluster.InstallCrd("deploy/operator/crd-neuroncaches.yaml");
    REQUIRE(
        cluster.client
            ->Create(k8s::resources::kNamespaces, "",
                     {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kTeam}}}})
            .ok());
  }
  ~Fixture() {
    if (controller) controller->Stop();
  }

  void Start(absl::Duration resolve_interval = absl::Minutes(5)) {
    CacheControllerOptions o;
    o.resolve_interval = resolve_interval;
    o.resolve_retry = absl::Milliseconds(50);
    o.debounce = absl::Milliseconds(20);
    o.max_backoff = absl::Milliseconds(200);
    controller = std::make_unique<CacheController>(*cluster.client, &resolver, o);
    controller->Start();
    REQUIRE(Eventually([&] { return controller->synced(); }));
  }

  void CreateCache(const std::string& name, const std::string& image,
                   const std::string& verify = "") {
    json obj = {{"apiVersion", "k8s.aws/v1alpha1"},
                {"kind", "NeuronCache"},
                {"metadata", {{"name", name}, {"namespace", kTeam}}},
                {"spec", {{"image", image}}}};
    if (!verify.empty()) obj["spec"]["verify"] = {{"digest", verify}};
    auto r = cluster.client->Create(cache::kNeuronCaches, kTeam, obj);
    CAPTURE(r.status().ToString());
    REQUIRE(r.ok());
  }

  json Cache(const std::string& name) { return cluster.server.Get(CachePath(name)); }
  // status.<field>, or `def` while the cache or its status is not there.
  json StatusField(const std::string& name, const char* field, json def = "") {
    const json c = Cache(name);
    if (!c.is_object() || !c.contains("status") || !c["status"].is_object()) return def;
    return c["status"].value(field, def);
  }

  // What a node's agent writes: its NeuronCacheNode with these records.
  void Report(const std::string& node, std::vector<cache::NodeCacheRecord> records) {
    cache::NodeCacheReport report;
    report.node_name = node;
    report.caches = std::move(records);
    json obj = cache::BuildCacheNodeObject(report);
    REQUIRE(cluster.server.Put("/apis/k8s.aws/v1alpha1/neuroncachenodes/" + node, obj).ok());
  }

  Cluster cluster;
  FakeResolver resolver;
  std::unique_ptr<CacheController> controller;
};

cache::NodeCacheRecord Record(const std::string& cache_name, const std::string& state,
                              std::vector<cache::PodUse> pods = {}) {
  cache::NodeCacheRecord r;
  r.kind = cache::kNeuronCacheKind;
  r.namespace_ = kTeam;
  r.name = cache_name;
  r.state = state;
  r.pods = std::move(pods);
  if (state == "Failed") {
    r.reason = "PullFailed";
    r.message = "registry said 401";
  }
  return r;
}

bool HasFinalizer(const json& obj) {
  for (const json& f : obj["metadata"].value("finalizers", json::array())) {
    if (f == cache::kInUseFinalizer) return true;
  }
  return false;
}

// The condition `type` of the object's status (null while there is none).
json Cond(const json& obj, const std::string& type) {
  if (!obj.is_object() || !obj.contains("status") || !obj["status"].is_object()) return nullptr;
  for (const json& c : obj["status"].value("conditions", json::array())) {
    if (c["type"] == type) return c;
  }
  return nullptr;
}
std::string CondMessage(const json& obj, const std::string& type) {
  const json c = Cond(obj, type);
  return c.is_null() ? "" : c.value("message", "");
}
std::string CondStatusOf(const json& obj, const std::string& type) {
  const json c = Cond(obj, type);
  return c.is_null() ? "" : c.value("status", "");
}
std::string CondReasonOf(const json& obj, const std::string& type) {
  const json c = Cond(obj, type);
  return c.is_null() ? "" : c.value("reason", "");
}

TEST_CASE("a cache gets the in-use finalizer and its tag resolved into status",
          "[operator][cache]") {
  Fixture f;
  f.resolver.Answer(kD1);
  f.Start(/*resolve_interval=*/absl::Milliseconds(300));
  f.CreateCache("llama", "registry.example.com/team/llama-cache:v1");
  REQUIRE(Eventually([&] { return f.StatusField("llama", "resolvedDigest") == kD1; }));
  json c = f.Cache("llama");
  CHECK(HasFinalizer(c));
  CHECK(CondStatusOf(c, "Resolved") == "True");
  CHECK(c["status"]["observedGeneration"] == c["metadata"]["generation"]);
  CHECK_FALSE(c["status"].value("resolvedAt", "").empty());
  CHECK(CondStatusOf(c, "Verified").empty());  // nothing pinned
  CHECK(CondStatusOf(c, "Ready") == "False");  // no node has it yet
  CHECK(CondReasonOf(c, "Ready") == "NoNodeExtracted");

  // The tag moves: the next resolve (every resolve_interval) writes the new digest.
  f.resolver.Answer(kD2);
  REQUIRE(Eventually([&] { return f.StatusField("llama", "resolvedDigest") == kD2; }));

  // The registry fails: Resolved=False with its message, the digest nodes have stays.
  f.resolver.Answer("", absl::UnavailableError("registry.example.com: connection refused"));
  REQUIRE(Eventually([&] { return CondStatusOf(f.Cache("llama"), "Resolved") == "False"; }));
  c = f.Cache("llama");
  CHECK(CondReasonOf(c, "Resolved") == "RegistryError");
  CHECK(absl::StrContains(CondMessage(c, "Resolved"), "connection refused"));
  CHECK(c["status"]["resolvedDigest"] == kD2);
}

TEST_CASE("an image by digest needs no registry call", "[operator][cache]") {
  Fixture f;
  f.resolver.Answer(kD2);
  f.Start();
  f.CreateCache("pinned", "registry.example.com/team/llama-cache@" + kD1);
  REQUIRE(Eventually([&] { return f.StatusField("pinned", "resolvedDigest") == kD1; }));
  CHECK(CondReasonOf(f.Cache("pinned"), "Resolved") == "ImageByDigest");
  CHECK(f.resolver.calls() == 0);
}

TEST_CASE("a tag that moved away from spec.verify.digest is refused", "[operator][cache]") {
  Fixture f;
  f.resolver.Answer(kD2);
  f.Start();
  f.CreateCache("strict", "registry.example.com/team/llama-cache:v1", kD1);
  REQUIRE(Eventually([&] { return CondStatusOf(f.Cache("strict"), "Verified") == "False"; }));
  const json c = f.Cache("strict");
  CHECK(CondReasonOf(c, "Verified") == "DigestMismatch");
  CHECK(absl::StrContains(CondMessage(c, "Verified"), kD1));
  CHECK(absl::StrContains(CondMessage(c, "Verified"), kD2));
  CHECK_FALSE(c["status"].contains("resolvedDigest"));  // nodes are not told to pull it

  // The tag comes back to the pinned digest: written, and verified.
  f.resolver.Answer(kD1);
  json spec_change = f.Cache("strict");
  spec_change["spec"]["nodeSelector"] = {{"a", "b"}};  // a spec change resolves at once
  REQUIRE(f.cluster.server.Put(CachePath("strict"), spec_change).ok());
  REQUIRE(Eventually([&] { return CondStatusOf(f.Cache("strict"), "Verified") == "True"; }));
  CHECK(f.Cache("strict")["status"]["resolvedDigest"] == kD1);
}

TEST_CASE("node reports are summed into counts, failures, outdated pods and Ready",
          "[operator][cache]") {
  Fixture f;
  f.resolver.Answer(kD2);
  f.Start();
  f.CreateCache("llama", "registry.example.com/team/llama-cache:v1");
  REQUIRE(Eventually([&] { return f.StatusField("llama", "resolvedDigest") == kD2; }));
  f.Report("node-a", {Record("llama", "Extracted",
                             {{kTeam, "train-0", "u0", kD2}, {kTeam, "train-1", "u1", kD1}})});
  f.Report("node-b", {Record("llama", "Pulling"), Record("other", "Extracted")});
  f.Report("node-c", {Record("llama", "Failed")});
  f.Report("node-d", {Record("llama", "Incompatible")});
  REQUIRE(Eventually([&] {
    return f.StatusField("llama", "counts", json::object()).value("nodesSelected", 0) == 4;
  }));
  json c = f.Cache("llama");
  CHECK(c["status"]["counts"] == json{{"nodesSelected", 4},
                                      {"nodesExtracted", 1},
                                      {"nodesPulling", 1},
                                      {"nodesFailed", 1},
                                      {"nodesIncompatible", 1},
                                      {"podsUsing", 2},
                                      {"podsOutdated", 1}});
  CHECK(c["status"]["failures"] ==
        json::array(
            {{{"node", "node-c"}, {"reason", "PullFailed"}, {"message", "registry said 401"}}}));
  CHECK(CondStatusOf(c, "Ready") == "False");
  CHECK(CondReasonOf(c, "Ready") == "NodesFailed");

  // The pulling and failed nodes finish: Ready, and the message says the counts.
  f.Report("node-b", {Record("llama", "Extracted")});
  f.Report("node-c", {Record("llama", "Extracted")});
  REQUIRE(Eventually([&] { return CondStatusOf(f.Cache("llama"), "Ready") == "True"; }));
  c = f.Cache("llama");
  CHECK(absl::StrContains(CondMessage(c, "Ready"), "3 of 4 nodes extracted"));
  CHECK(c["status"]["failures"] == json::array());
  // A node gone takes its records with it.
  REQUIRE(f.cluster.client->Delete(cache::kNeuronCacheNodes, "", "node-d").ok());
  REQUIRE(Eventually([&] {
    return f.StatusField("llama", "counts", json::object()).value("nodesSelected", 0) == 3;
  }));
}

TEST_CASE("a deleting cache keeps its finalizer while pods use it, and goes after",
          "[operator][cache]") {
  Fixture f;
  f.Start();
  f.CreateCache("llama", "registry.example.com/team/llama-cache@" + kD1);
  REQUIRE(Eventually([&] { return HasFinalizer(f.Cache("llama")); }));
  f.Report("node-a", {Record("llama", "Extracted", {{kTeam, "train-0", "u0", kD1}})});
  f.Report("node-b", {Record("llama", "Extracted", {{kTeam, "train-1", "u1", kD1}})});
  REQUIRE(Eventually(
      [&] { return f.StatusField("llama", "counts", json::object()).value("podsUsing", 0) == 2; }));

  REQUIRE(f.cluster.client->Delete(cache::kNeuronCaches, kTeam, "llama").ok());
  REQUIRE(Eventually([&] { return CondStatusOf(f.Cache("llama"), "Deleting") == "True"; }));
  const json c = f.Cache("llama");
  CHECK(CondReasonOf(c, "Deleting") == "PodsStillUsing");
  CHECK(CondMessage(c, "Deleting") == "waiting for 2 pods: team/train-0, team/train-1");
  CHECK(HasFinalizer(c));

  // One pod left: still held. None: the finalizer goes and so does the cache.
  f.Report("node-a", {Record("llama", "Extracted")});
  REQUIRE(Eventually([&] {
    return CondMessage(f.Cache("llama"), "Deleting") == "waiting for 1 pods: team/train-1";
  }));
  f.Report("node-b", {Record("llama", "Extracted")});
  REQUIRE(Eventually([&] { return f.Cache("llama").is_null(); }));
}

TEST_CASE("ClusterNeuronCaches get the same treatment", "[operator][cache]") {
  Fixture f;
  f.resolver.Answer(kD1);
  f.Start();
  json obj = {{"apiVersion", "k8s.aws/v1alpha1"},
              {"kind", "ClusterNeuronCache"},
              {"metadata", {{"name", "shared"}}},
              {"spec", {{"image", "registry.example.com/shared/cache:v1"}}}};
  REQUIRE(f.cluster.client->Create(cache::kClusterNeuronCaches, "", obj).ok());
  cache::NodeCacheRecord r = Record("shared", "Extracted", {{"other", "p", "u", kD1}});
  r.kind = cache::kClusterNeuronCacheKind;
  r.namespace_.clear();
  f.Report("node-a", {r});
  const std::string path = "/apis/k8s.aws/v1alpha1/clusterneuroncaches/shared";
  REQUIRE(Eventually([&] { return CondStatusOf(f.cluster.server.Get(path), "Ready") == "True"; }));
  const json c = f.cluster.server.Get(path);
  CHECK(HasFinalizer(c));
  CHECK(c["status"]["resolvedDigest"] == kD1);
  CHECK(c["status"]["counts"]["podsUsing"] == 1);
}

}  // namespace
}  // namespace neuron::op
