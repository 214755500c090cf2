// CacheStore on a real directory: crash recovery, atomic commit, entries, refs, garbage
// collection and the validation of every name a path is built from.
#include "lib/cache/cache_store.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "absl/strings/match.h"
#include "lib/cache/compile_cache.h"
#include "lib/cache/layer_extractor.h"
#include "nlohmann/json.hpp"
#include "tests/cache/layer_test_util.h"

namespace neuron::cache {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::ScratchDir;
using testing::WriteFile;

std::string Digest(char c) { return "sha256:" + std::string(64, c); }

// Commits an image holding one file named after the digest.
void AddImage(CacheStore& store, const std::string& digest) {
  absl::StatusOr<std::string> staging = store.NewStagingDir(digest);
  REQUIRE(staging.ok());
  WriteFile(*staging + "/content", digest);
  ImageInfo info;
  info.digest = digest;
  REQUIRE(store.CommitStaging(*staging, info).ok());
}

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  return out;
}

TEST_CASE("Init creates the layout and cleans what a crash left", "[store]") {
  ScratchDir tmp;
  const std::string root = tmp.Sub("root");
  WriteFile(root + "/staging/" + std::string(64, 'a') + ".x1y2z3/half/extracted", "partial");
  WriteFile(root + "/downloads/blob.abc123", "partial blob");
  WriteFile(root + "/refs/vol-1.json", R"({"digest":")" + Digest('a') + R"(","user":"csi"})");
  CacheStore store(root);
  REQUIRE(store.Init().ok());
  for (const char* sub : {"images/sha256", "staging", "downloads", "entries", "refs"}) {
    CHECK(fs::is_directory(root + "/" + sub));
  }
  CHECK(fs::is_empty(root + "/staging"));
  CHECK(fs::is_empty(root + "/downloads"));
  CHECK(fs::exists(root + "/refs/vol-1.json"));  // refs survive a restart
  REQUIRE(store.Init().ok());                    // idempotent
}

TEST_CASE("CommitStaging makes a complete image appear at once", "[store]") {
  ScratchDir tmp;
  CacheStore store(tmp.Sub("root"));
  REQUIRE(store.Init().ok());
  const std::string d = Digest('b');
  CHECK_FALSE(store.HasImage(d));
  absl::StatusOr<std::string> staging = store.NewStagingDir(d);
  REQUIRE(staging.ok());
  CHECK(absl::StartsWith(*staging, tmp.Sub("root/staging/") + std::string(64, 'b') + "."));
  WriteFile(*staging + "/neuronxcc-2.15/MODULE_1+2/model.neff", "neff");
  CHECK_FALSE(store.HasImage(d));  // staging is invisible

  ImageInfo info{d, 4, 1, 1, {"trn2"}, absl::FromUnixSeconds(1700000000)};
  REQUIRE(store.CommitStaging(*staging, info).ok());
  CHECK(store.HasImage(d));
  CHECK(store.ImagePath(d) == tmp.Sub("root/images/sha256/") + std::string(64, 'b'));
  CHECK(ReadFile(store.ImagePath(d) + "/neuronxcc-2.15/MODULE_1+2/model.neff") == "neff");
  CHECK(fs::is_empty(tmp.Sub("root/staging")));
  absl::StatusOr<ImageInfo> read = store.ReadImageInfo(d);
  REQUIRE(read.ok());
  CHECK(read->digest == d);
  CHECK(read->bytes == 4);
  CHECK(read->modules == 1);
  CHECK(read->targets == std::vector<std::string>{"trn2"});
  CHECK(read->extracted_at == absl::FromUnixSeconds(1700000000));
  const auto json = nlohmann::json::parse(ReadFile(store.ImagePath(d) + ".json"));
  CHECK(json["extractedAt"] == "2023-11-14T22:13:20Z");

  // A second commit of the same image discards its staging and keeps the first.
  absl::StatusOr<std::string> again = store.NewStagingDir(d);
  REQUIRE(again.ok());
  WriteFile(*again + "/other", "x");
  REQUIRE(store.CommitStaging(*again, info).ok());
  CHECK_FALSE(fs::exists(*again));
  CHECK_FALSE(fs::exists(store.ImagePath(d) + "/other"));
  CHECK(store.ReadImageInfo(Digest('c')).status().code() == absl::StatusCode::kNotFound);
  CHECK(store.CommitStaging(tmp.path(), info).code() == absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::string> other = store.NewStagingDir(Digest('f'));
  REQUIRE(other.ok());
  CHECK(store.CommitStaging(*other, info).code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("an extracted compile cache goes from staging to a committed image", "[store]") {
  ScratchDir tmp;
  CacheStore store(tmp.Sub("root"));
  REQUIRE(store.Init().ok());
  const std::string d = Digest('e');
  testing::WriteLayer(
      tmp.Sub("layer.tgz"),
      {testing::File("neuronxcc-2.15/MODULE_1+2/model.neff", "NEFF"),
       testing::File("neuronxcc-2.15/MODULE_1+2/compile_flags.txt", "--target=trn2")},
      testing::Compression::kGzip);
  absl::StatusOr<std::string> staging = store.NewStagingDir(d);
  REQUIRE(staging.ok());
  ExtractStats stats;
  REQUIRE(ExtractLayer(tmp.Sub("layer.tgz"), *staging, ExtractLimits{}, stats).ok());
  absl::StatusOr<CompileCacheSummary> summary = ScanCompileCache(*staging);
  REQUIRE(summary.ok());
  ImageInfo info{d,
                 stats.bytes,
                 stats.files,
                 summary->modules,
                 {summary->targets.begin(), summary->targets.end()},
                 absl::Now()};
  REQUIRE(store.CommitStaging(*staging, info).ok());
  CHECK(store.ReadImageInfo(d)->targets == std::vector<std::string>{"trn2"});
  CHECK(store.ReadImageInfo(d)->files == 2);
}

TEST_CASE("entries round-trip at their contract paths", "[store]") {
  ScratchDir tmp;
  CacheStore store(tmp.Sub("root"));
  REQUIRE(store.Init().ok());
  const CacheKey ns_key{CacheKind::kNamespaced, "team-a", "llama.v2"};
  const CacheKey cluster_key{CacheKind::kCluster, "", "shared"};
  CacheEntry entry{"registry.example/cache:1",
                   Digest('c'),
                   CacheState::kExtracted,
                   "Extracted",
                   "3 modules",
                   7,
                   absl::FromUnixSeconds(1700000000)};
  REQUIRE(store.WriteEntry(ns_key, entry).ok());
  entry.state = CacheState::kIncompatible;
  REQUIRE(store.WriteEntry(cluster_key, entry).ok());

  const std::string ns_path = tmp.Sub("root/entries/NeuronCache/team-a/llama.v2.json");
  const auto json = nlohmann::json::parse(ReadFile(ns_path));
  CHECK(json["state"] == "Extracted");
  CHECK(json["generation"] == 7);
  CHECK(json["image"] == "registry.example/cache:1");
  CHECK(fs::exists(tmp.Sub("root/entries/ClusterNeuronCache/_/shared.json")));
  CHECK(Names(tmp.Sub("root/entries/NeuronCache/team-a")) ==
        std::vector<std::string>{"llama.v2.json"});  // no temp file left behind

  auto read = store.ReadEntry(ns_key);
  REQUIRE(read.ok());
  REQUIRE(read->has_value());
  CHECK((*read)->state == CacheState::kExtracted);
  CHECK((*read)->message == "3 modules");
  CHECK((*read)->updated == absl::FromUnixSeconds(1700000000));

  WriteFile(tmp.Sub("root/entries/NeuronCache/team-a/broken.json"), "{not json");
  auto all = store.ListEntries();
  REQUIRE(all.ok());
  REQUIRE(all->size() == 2);  // the broken one is skipped
  CHECK((*all)[0].first == ns_key);
  CHECK((*all)[1].first == cluster_key);
  CHECK((*all)[1].second.state == CacheState::kIncompatible);
  CHECK(store.ReadEntry({CacheKind::kNamespaced, "team-a", "broken"}).status().code() ==
        absl::StatusCode::kDataLoss);

  REQUIRE(store.RemoveEntry(ns_key).ok());
  REQUIRE(store.RemoveEntry(ns_key).ok());
  auto gone = store.ReadEntry(ns_key);
  REQUIRE(gone.ok());
  CHECK_FALSE(gone->has_value());
}

TEST_CASE("refs are added, listed and removed", "[store]") {
  ScratchDir tmp;
  CacheStore store(tmp.Sub("root"));
  REQUIRE(store.Init().ok());
  RefInfo ref{"csi-0a1b", Digest('d'), "csi", "ns", "pod-1", "uid-1", absl::Now()};
  REQUIRE(store.AddRef(ref).ok());
  REQUIRE(
      store.AddRef({"9f8e-claim", Digest('e'), "dra", "ns", "pod-2", "uid-2", absl::Now()}).ok());
  const auto json = nlohmann::json::parse(ReadFile(tmp.Sub("root/refs/csi-0a1b.json")));
  CHECK(json["user"] == "csi");
  CHECK(json["podUID"] == "uid-1");
  auto refs = store.ListRefs();
  REQUIRE(refs.ok());
  REQUIRE(refs->size() == 2);
  REQUIRE(store.RemoveRef("csi-0a1b").ok());
  REQUIRE(store.RemoveRef("csi-0a1b").ok());  // absent is fine
  refs = store.ListRefs();
  REQUIRE(refs.ok());
  REQUIRE(refs->size() == 1);
  CHECK((*refs)[0].id == "9f8e-claim");
  CHECK((*refs)[0].pod_name == "pod-2");
  ref.user = "kubelet";
  CHECK(store.AddRef(ref).code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("GarbageCollect keeps wanted and referenced images only", "[store]") {
  ScratchDir tmp;
  CacheStore store(tmp.Sub("root"));
  REQUIRE(store.Init().ok());
  const std::string kept = Digest('1'), used = Digest('2'), unused = Digest('3');
  for (const std::string& d : {kept, used, unused}) AddImage(store, d);
  REQUIRE(store.AddRef({"vol", used, "csi", "ns", "p", "u", absl::Now()}).ok());
  WriteFile(tmp.Sub("root/images/sha256/") + std::string(64, '4') + ".json", "{}");  // orphan

  auto removed = store.GarbageCollect({kept});
  REQUIRE(removed.ok());
  CHECK(*removed == std::vector<std::string>{unused});
  CHECK(store.HasImage(kept));
  CHECK(store.HasImage(used));
  CHECK_FALSE(store.HasImage(unused));
  CHECK_FALSE(fs::exists(store.ImagePath(unused) + ".json"));
  CHECK_FALSE(fs::exists(tmp.Sub("root/images/sha256/") + std::string(64, '4') + ".json"));
  CHECK(fs::is_empty(tmp.Sub("root/staging")));

  // A ref that cannot be read stops collection rather than guessing.
  WriteFile(tmp.Sub("root/refs/bad.json"), "garbage");
  CHECK(store.GarbageCollect({}).status().code() == absl::StatusCode::kDataLoss);
  CHECK(store.HasImage(kept));
  REQUIRE(store.RemoveRef("bad").ok());
  REQUIRE(store.RemoveRef("vol").ok());
  removed = store.GarbageCollect({});
  REQUIRE(removed.ok());
  CHECK(removed->size() == 2);
}

TEST_CASE("invalid names and digests are rejected before any path is built", "[store]") {
  ScratchDir tmp;
  CacheStore store(tmp.Sub("root"));
  REQUIRE(store.Init().ok());
  const CacheEntry entry;
  for (const std::string& bad :
       {std::string(""), std::string("../x"), std::string("a/b"), std::string(".hidden"),
        std::string("-dash"), std::string(254, 'a'), std::string("sp ace")}) {
    INFO(bad);
    CHECK(store.WriteEntry({CacheKind::kNamespaced, "ns", bad}, entry).code() ==
          absl::StatusCode::kInvalidArgument);
    CHECK(store.WriteEntry({CacheKind::kNamespaced, bad, "name"}, entry).code() ==
          absl::StatusCode::kInvalidArgument);
    CHECK(store.RemoveRef(bad).code() == absl::StatusCode::kInvalidArgument);
  }
  CHECK(store.WriteEntry({CacheKind::kNamespaced, "ns", std::string(250, 'a')}, entry).ok());
  // 253 is a valid Kubernetes name, but "<name>.json" would pass the 255-byte file name limit.
  const absl::Status too_long =
      store.WriteEntry({CacheKind::kNamespaced, "ns", std::string(253, 'a')}, entry);
  CHECK(too_long.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(too_long.message(), "at most 250"));
  for (const std::string& bad : {std::string("sha256:abc"), "sha256:" + std::string(64, 'A'),
                                 "sha512:" + std::string(64, 'a'),
                                 "sha256:" + std::string(63, 'a') + "/", std::string(64, 'a')}) {
    INFO(bad);
    CHECK(store.NewStagingDir(bad).status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(store.ImagePath(bad).empty());
    CHECK_FALSE(store.HasImage(bad));
    CHECK(store.AddRef({"id", bad, "csi", "", "", "", absl::Now()}).code() ==
          absl::StatusCode::kInvalidArgument);
  }
  CHECK(Names(tmp.Sub("root/staging")).empty());
  CHECK(Names(tmp.Sub("root/refs")).empty());
}

}  // namespace
}  // namespace neuron::cache
