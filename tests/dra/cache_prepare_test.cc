// NeuronPreparer with a compile cache (NeuronConfig.compileCache) over real files: the CDI spec on
// disk bind-mounts the directory CacheMounts gives, the checkpoint records the cache so that
// unprepare releases it (also after a restart), and every failure (cache not ready, a later step,
// no cache support, a bad config) fails only that claim and leaves nothing half-done.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "lib/dra/cdi_spec.h"
#include "lib/dra/checkpoint.h"
#include "lib/dra/neuron_preparer.h"
#include "nlohmann/json.hpp"
#include "tests/dra/fake_cache_mounts.h"
#include "tests/sysfs/temp_dir.h"

namespace neuron::dra {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using sysfs::testing::TempDir;
using testing::FakeCacheMounts;

constexpr char kCacheNode[] = "node-a";

class CacheSource final : public ClaimSource {
 public:
  absl::StatusOr<json> Get(const ClaimRef& c) override {
    auto it = claims.find(c.uid);
    if (it == claims.end()) return absl::NotFoundError("no claim " + c.name);
    return it->second;
  }
  std::map<std::string, json> claims;
};

// A claim in namespace ml for `device`, reserved for pod worker-0; `cache` is compileCache.
json CacheClaim(const std::string& uid, const std::string& device, const json& cache) {
  json params = {{"apiVersion", "neuron.aws.com/v1"}, {"kind", "NeuronConfig"}};
  if (!cache.is_null()) params["compileCache"] = cache;
  json config = {{"source", "FromClaim"},
                 {"opaque", {{"driver", "neuron.aws.com"}, {"parameters", params}}}};
  json result = {{"request", "neurons"},
                 {"driver", "neuron.aws.com"},
                 {"pool", kCacheNode},
                 {"device", device}};
  return {
      {"metadata", {{"namespace", "ml"}, {"name", "claim-" + uid}, {"uid", uid}}},
      {"status",
       {{"allocation",
         {{"devices", {{"results", json::array({result})}, {"config", json::array({config})}}}}},
        {"reservedFor", json::array({{{"resource", "pods"},
                                      {"name", "worker-0"},
                                      {"uid", "pod-uid-0"},
                                      {"apiGroup", ""}}})}}}};
}

ClaimRef CacheRef(const std::string& uid) { return {"ml", "claim-" + uid, uid}; }

struct CacheEnv {
  TempDir dir;
  CacheSource source;
  FakeCacheMounts mounts{dir.path() + "/cache"};
  std::string cdi_dir() const { return dir.path() + "/cdi"; }
  std::string checkpoint() const { return dir.path() + "/state/checkpoint.json"; }
  std::unique_ptr<NeuronPreparer> Make(CacheMounts* cache_mounts) {
    fs::create_directories(cdi_dir());
    NeuronPreparerOptions o;
    o.node_name = kCacheNode;
    o.cdi_dir = cdi_dir();
    o.checkpoint_path = checkpoint();
    o.device_host_path = "/dev/null";
    o.node_facts = []() -> absl::StatusOr<NodeFacts> { return NodeFacts{16, 8, 2, true, {}}; };
    o.cache_mounts = cache_mounts;
    auto p = NeuronPreparer::Create(o, source);
    REQUIRE(p.ok());
    return *std::move(p);
  }
  std::unique_ptr<NeuronPreparer> Make() { return Make(&mounts); }
  std::string SpecPath(const std::string& uid) const {
    return cdi_dir() + "/" + CdiSpecFileName(uid);
  }
  json Mounts(const std::string& uid) const {
    std::ifstream in(SpecPath(uid));
    REQUIRE(in.good());
    return json::parse(in)["devices"][0]["containerEdits"].value("mounts", json());
  }
  Checkpoint OnDisk() const {
    absl::StatusOr<Checkpoint> c = LoadCheckpoint(checkpoint());
    REQUIRE(c.ok());
    return *c;
  }
};

TEST_CASE("a claim naming a cache gets its directory bind-mounted through CDI", "[dra][cache]") {
  CacheEnv env;
  env.source.claims["u1"] = CacheClaim("u1", "neurondevice3", {{"name", "llama"}});
  auto p = env.Make();
  auto r = p->Prepare({CacheRef("u1")});
  REQUIRE(r.at("u1").ok());
  CHECK(env.Mounts("u1") == json::array({{{"hostPath", env.mounts.ViewDir("u1")},
                                          {"containerPath", "/var/tmp/neuron-compile-cache"},
                                          {"options", {"rbind", "rw"}}}}));
  CHECK(env.mounts.HasView("u1"));
  REQUIRE(env.mounts.prepares().size() == 1);
  CacheMountRequest want{
      "u1", "ml", "claim-u1", "NeuronCache", "ml", "llama", {{"ml", "worker-0", "pod-uid-0"}}};
  CHECK(env.mounts.prepares()[0] == want);
  const Checkpoint cp = env.OnDisk();
  REQUIRE(cp.claims.count("u1") == 1);
  CHECK(cp.claims.at("u1").state == ClaimState::kPrepared);
  CHECK(cp.claims.at("u1").cache ==
        PreparedCache{"NeuronCache", "ml", "llama", "/var/tmp/neuron-compile-cache"});

  CHECK(*p->Prepare({CacheRef("u1")}).at("u1") == *r.at("u1"));  // a repeat: from the checkpoint
  CHECK(env.mounts.prepares().size() == 1);

  REQUIRE(p->Unprepare({CacheRef("u1")}).at("u1").ok());
  CHECK(env.mounts.releases() == std::vector<std::string>{"u1"});
  CHECK_FALSE(env.mounts.HasView("u1"));
  CHECK_FALSE(fs::exists(env.SpecPath("u1")));
  CHECK(env.OnDisk().claims.empty());
}

TEST_CASE("a cluster cache at the claim's mount path", "[dra][cache]") {
  CacheEnv env;
  env.source.claims["u1"] = CacheClaim(
      "u1", "neurondevice0", {{"clusterCache", "shared"}, {"mountPath", "/models/cache"}});
  auto p = env.Make();
  REQUIRE(p->Prepare({CacheRef("u1")}).at("u1").ok());
  CHECK(env.Mounts("u1")[0]["containerPath"] == "/models/cache");
  REQUIRE(env.mounts.prepares().size() == 1);
  CHECK(env.mounts.prepares()[0].kind == "ClusterNeuronCache");
  CHECK(env.mounts.prepares()[0].cache_namespace.empty());
  CHECK(env.OnDisk().claims.at("u1").cache->namespace_name.empty());
}

TEST_CASE("after a restart, unprepare still releases the cache", "[dra][cache]") {
  CacheEnv env;
  env.source.claims["u1"] = CacheClaim("u1", "neurondevice1", {{"name", "llama"}});
  { REQUIRE(env.Make()->Prepare({CacheRef("u1")}).at("u1").ok()); }
  env.source.claims.clear();  // the claim is gone from the API by now
  FakeCacheMounts after(env.dir.path() + "/cache");
  auto restarted = env.Make(&after);
  CHECK(restarted->PreparedClaims() == std::vector<std::string>{"u1"});
  REQUIRE(restarted->Unprepare({CacheRef("u1")}).at("u1").ok());
  CHECK(after.releases() == std::vector<std::string>{"u1"});
  CHECK_FALSE(after.HasView("u1"));
  CHECK(after.prepares().empty());
  CHECK(env.OnDisk().claims.empty());
}

TEST_CASE("a cache that is not ready fails the claim and leaves nothing", "[dra][cache]") {
  CacheEnv env;
  env.source.claims["u1"] = CacheClaim("u1", "neurondevice2", {{"name", "llama"}});
  env.source.claims["plain"] = CacheClaim("plain", "neurondevice2", nullptr);
  env.mounts.FailPrepare(absl::UnavailableError("not extracted yet: Pulling"));
  auto p = env.Make();
  auto r = p->Prepare({CacheRef("u1")}).at("u1");
  CHECK(absl::IsUnavailable(r.status()));  // the kubelet retries
  CHECK_THAT(std::string(r.status().message()),
             Catch::Contains("prepare ResourceClaim ml/claim-u1: compile cache NeuronCache "
                             "ml/llama: not extracted yet: Pulling"));
  CHECK_FALSE(fs::exists(env.SpecPath("u1")));
  CHECK(p->PreparedClaims().empty());
  CHECK(env.OnDisk().claims.empty());
  // Its device was not kept: another claim gets it, and the retry works once the cache is there.
  REQUIRE(p->Prepare({CacheRef("plain")}).at("plain").ok());
  CHECK(env.Mounts("plain").is_null());
  REQUIRE(p->Unprepare({CacheRef("plain")}).at("plain").ok());
  env.mounts.FailPrepare(absl::OkStatus());
  REQUIRE(p->Prepare({CacheRef("u1")}).at("u1").ok());
  CHECK(env.Mounts("u1")[0]["hostPath"] == env.mounts.ViewDir("u1"));
}

TEST_CASE("a failure after the cache is mounted releases it", "[dra][cache]") {
  CacheEnv env;
  env.source.claims["u1"] = CacheClaim("u1", "neurondevice2", {{"name", "llama"}});
  env.mounts.AnswerDir("relative/dir");  // the CDI spec refuses it
  auto p = env.Make();
  auto r = p->Prepare({CacheRef("u1")}).at("u1");
  CHECK(absl::IsInvalidArgument(r.status()));
  CHECK_THAT(std::string(r.status().message()), Catch::Contains("hostPath \"relative/dir\""));
  CHECK(env.mounts.releases() == std::vector<std::string>{"u1"});
  CHECK_FALSE(fs::exists(env.SpecPath("u1")));
  CHECK(env.OnDisk().claims.empty());
}

TEST_CASE("a cache that cannot be released is retried, without holding the devices",
          "[dra][cache]") {
  CacheEnv env;
  env.source.claims["u1"] = CacheClaim("u1", "neurondevice2", {{"name", "llama"}});
  env.source.claims["next"] = CacheClaim("next", "neurondevice2", nullptr);
  auto p = env.Make();
  REQUIRE(p->Prepare({CacheRef("u1")}).at("u1").ok());
  env.mounts.FailRelease(absl::InternalError("umount: device busy"));
  absl::Status s = p->Unprepare({CacheRef("u1")}).at("u1");
  CHECK_THAT(std::string(s.message()),
             Catch::Contains("release compile cache NeuronCache ml/llama: umount: device busy"));
  CHECK(env.OnDisk().claims.count("u1") == 1);  // still to release
  env.mounts.FailRelease(absl::OkStatus());
  REQUIRE(p->Unprepare({CacheRef("u1")}).at("u1").ok());
  CHECK(env.OnDisk().claims.empty());
  CHECK(env.mounts.releases().size() == 2);

  // The same when undoing a failed prepare: the record stays for the cache, not the device.
  env.mounts.AnswerDir("relative/dir");
  env.mounts.FailRelease(absl::InternalError("umount: device busy"));
  CHECK_FALSE(p->Prepare({CacheRef("u1")}).at("u1").ok());
  REQUIRE(env.OnDisk().claims.count("u1") == 1);
  CHECK(env.OnDisk().claims.at("u1").devices.empty());
  CHECK(p->Prepare({CacheRef("next")}).at("next").ok());
  env.mounts.FailRelease(absl::OkStatus());
  REQUIRE(p->Unprepare({CacheRef("u1")}).at("u1").ok());
  CHECK(env.OnDisk().claims.count("u1") == 0);
}

TEST_CASE("without compile caches enabled, a claim naming one fails clearly", "[dra][cache]") {
  CacheEnv env;
  env.source.claims["u1"] = CacheClaim("u1", "neurondevice0", {{"name", "llama"}});
  env.source.claims["plain"] = CacheClaim("plain", "neurondevice1", nullptr);
  auto p = env.Make(nullptr);
  auto r = p->Prepare({CacheRef("u1"), CacheRef("plain")});
  CHECK(absl::IsFailedPrecondition(r.at("u1").status()));
  CHECK_THAT(std::string(r.at("u1").status().message()),
             Catch::Contains("ResourceClaim ml/claim-u1: its NeuronConfig names compileCache "
                             "NeuronCache ml/llama, but compile caches are not enabled in this "
                             "node's Neuron DRA driver"));
  CHECK_FALSE(fs::exists(env.SpecPath("u1")));
  CHECK(r.at("plain").ok());  // other claims are not affected
  CHECK(p->PreparedClaims() == std::vector<std::string>{"plain"});
}

TEST_CASE("a claim prepared with a cache unprepares after caches were turned off", "[dra][cache]") {
  CacheEnv env;
  env.source.claims["u1"] = CacheClaim("u1", "neurondevice0", {{"name", "llama"}});
  { REQUIRE(env.Make()->Prepare({CacheRef("u1")}).at("u1").ok()); }
  auto without = env.Make(nullptr);
  CHECK(without->Unprepare({CacheRef("u1")}).at("u1").ok());  // the pod can finish
  CHECK(env.OnDisk().claims.empty());
}

TEST_CASE("an invalid compileCache fails the claim with the reason", "[dra][cache]") {
  CacheEnv env;
  env.source.claims["u1"] =
      CacheClaim("u1", "neurondevice0", {{"name", "llama"}, {"clusterCache", "x"}});
  env.source.claims["u2"] =
      CacheClaim("u2", "neurondevice1", {{"name", "llama"}, {"mountPath", "/a/../b"}});
  auto p = env.Make();
  auto r = p->Prepare({CacheRef("u1"), CacheRef("u2")});
  CHECK(absl::IsInvalidArgument(r.at("u1").status()));
  CHECK_THAT(std::string(r.at("u1").status().message()),
             Catch::Contains("compileCache needs only one of name"));
  CHECK_THAT(std::string(r.at("u2").status().message()),
             Catch::Contains("mountPath \"/a/../b\" must not contain \"..\""));
  CHECK(env.mounts.prepares().empty());
  CHECK(fs::is_empty(env.cdi_dir()));
}

}  // namespace
}  // namespace neuron::dra
