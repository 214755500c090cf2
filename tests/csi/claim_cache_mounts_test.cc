// File: tests/csi/claim_cache_mounts_test.cc
// The DRA driver's compile caches over a real node store and real overlay mounts (or the copy
// fallback where overlay cannot mount): a claim's view, its privacy, its ref keeping the image
// from garbage collection, and the errors a claim gets while the cache is not ready.
#include "lib/csi/claim_cache_mounts.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "lib/cache/cache_store.h"
#include "lib/csi/mounter.h"
#include "tests/csi/csi_test_env.h"

namespace neuron::csi {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::TempTree;

const std::string kDigest = "sha256:" + std::string(64, 'a');

// An extracted image holding one NEFF, and an entry saying NeuronCache team/llama is it.
void Seed(cache::CacheStore& store, cache::CacheState state) {
  auto staging = store.NewStagingDir(kDigest);
  REQUIRE(staging.ok());
  fs::create_directories(*staging + "/neuronxcc-2.21/MODULE_a+b");
  std::ofstream(*staging + "/neuronxcc-2.21/MODULE_a+b/model.neff") << "neff";
  cache::ImageInfo info;
  info.digest = kDigest;
  REQUIRE(store.CommitStaging(*staging, info).ok());
  cache::CacheEntry e;
  e.image = "registry/team/llama:v1";
  e.digest = kDigest;
  e.state = state;
  e.reason = state == cache::CacheState::kExtracted ? "Extracted" : "Pulling";
  REQUIRE(store.WriteEntry({cache::CacheKind::kNamespaced, "team", "llama"}, e).ok());
}

dra::CacheMountRequest Request(const std::string& uid) {
  dra::CacheMountRequest r;
  r.claim_uid = uid;
  r.claim_namespace = "team";
  r.claim_name = "claim-" + uid;
  r.kind = "NeuronCache";
  r.cache_namespace = "team";
  r.cache_name = "llama";
  r.pods.push_back({"team", "trainer", "pod-uid"});
  return r;
}

TEST_CASE("a claim's cache view is private, kept from GC while held, and released",
          "[csi][dra][cache]") {
  TempTree tmp;
  cache::CacheStore store(tmp.path() + "/cache");
  REQUIRE(store.Init().ok());
  Seed(store, cache::CacheState::kExtracted);
  auto mounter = DetectMounter(tmp.path() + "/cache/claims");
  ClaimCacheMounts mounts(store, *mounter);
  auto view = mounts.Prepare(Request("u1"));
  REQUIRE(view.ok());
  CHECK(ReadFile(*view + "/neuronxcc-2.21/MODULE_a+b/model.neff") == "neff");
  std::ofstream(*view + "/neuronxcc-2.21/new.neff") << "mine";
  CHECK_FALSE(fs::exists(store.ImagePath(kDigest) + "/neuronxcc-2.21/new.neff"));
  auto again = mounts.Prepare(Request("u1"));  // the kubelet retries
  REQUIRE(again.ok());
  CHECK(*again == *view);
  // No cache wants the image any more, but the claim holds it.
  auto removed = store.GarbageCollect({});
  REQUIRE(removed.ok());
  CHECK(removed->empty());
  auto refs = store.ListRefs();
  REQUIRE(refs.ok());
  REQUIRE(refs->size() == 1);
  CHECK(refs->front().user == "dra");
  CHECK(refs->front().pod_name == "trainer");
  CHECK(refs->front().cache == "NeuronCache/team/llama");
  REQUIRE(mounts.Release("u1").ok());
  CHECK_FALSE(fs::exists(tmp.path() + "/cache/claims/u1"));
  CHECK(mounts.Release("u1").ok());  // idempotent
  removed = store.GarbageCollect({});
  REQUIRE(removed.ok());
  CHECK(*removed == std::vector<std::string>{kDigest});
}

TEST_CASE("a claim naming a cache that is not ready or unknown gets a clear error",
          "[csi][dra][cache]") {
  TempTree tmp;
  cache::CacheStore store(tmp.path() + "/cache");
  REQUIRE(store.Init().ok());
  auto mounter = DetectMounter(tmp.path() + "/cache/claims");
  ClaimCacheMounts mounts(store, *mounter);
  auto unknown = mounts.Prepare(Request("u2"));
  CHECK(unknown.status().code() == absl::StatusCode::kNotFound);
  CHECK(std::string(unknown.status().message()).find("team/llama") != std::string::npos);
  Seed(store, cache::CacheState::kPulling);
  auto pulling = mounts.Prepare(Request("u2"));
  CHECK(pulling.status().code() == absl::StatusCode::kUnavailable);
  CHECK(std::string(pulling.status().message()).find("Pulling") != std::string::npos);
  auto refs = store.ListRefs();
  REQUIRE(refs.ok());
  CHECK(refs->empty());
  dra::CacheMountRequest bad = Request("../etc");
  CHECK(mounts.Prepare(bad).status().code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace neuron::csi
