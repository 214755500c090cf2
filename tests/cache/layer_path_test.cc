// The lexical checks on layer entry names, symlink targets and whiteouts.
#include "lib/cache/layer_path.h"

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "lib/cache/cache_entry.h"

namespace neuron::cache {
namespace {

TEST_CASE("NormalizeLayerPath cleans names and rejects escapes", "[layer_path]") {
  CHECK(*NormalizeLayerPath("./a//b/") == "a/b");
  CHECK(*NormalizeLayerPath("a/./b") == "a/b");
  CHECK(*NormalizeLayerPath("./") == ".");
  CHECK(*NormalizeLayerPath("..a/b..") == "..a/b..");
  for (std::string_view bad : {"", "/abs", "../x", "a/../../x", "a/..", "//x"}) {
    INFO(bad);
    CHECK(NormalizeLayerPath(bad).status().code() == absl::StatusCode::kInvalidArgument);
  }
  CHECK(
      absl::StrContains(NormalizeLayerPath(std::string_view("a\0b", 3)).status().message(), "NUL"));
  CHECK(!NormalizeLayerPath(std::string(4096, 'a')).ok());
  CHECK(!NormalizeLayerPath(std::string(256, 'a')).ok());
  CHECK(NormalizeLayerPath(std::string(255, 'a')).ok());
}

TEST_CASE("CheckSymlinkTarget resolves from the link's directory", "[layer_path]") {
  CHECK(CheckSymlinkTarget("a/b/l", "../../x").ok());
  CHECK(CheckSymlinkTarget("a/l", "./x/../y").ok());
  CHECK(CheckSymlinkTarget("l", "x").ok());
  CHECK_FALSE(CheckSymlinkTarget("l", "..").ok());
  CHECK_FALSE(CheckSymlinkTarget("a/l", "../../x").ok());
  CHECK_FALSE(CheckSymlinkTarget("a/l", "x/../../..").ok());
  CHECK_FALSE(CheckSymlinkTarget("a/l", "/etc/passwd").ok());
  CHECK_FALSE(CheckSymlinkTarget("a/l", "").ok());
}

TEST_CASE("CanonicalSymlinkTarget leaves \"..\" only in front", "[layer_path]") {
  CHECK(CanonicalSymlinkTarget("y/..") == ".");
  CHECK(CanonicalSymlinkTarget("../../a/./b//c/../d") == "../../a/b/d");
  CHECK(CanonicalSymlinkTarget("a/../../x") == "../x");
  CHECK(CanonicalSymlinkTarget("tool") == "tool");
}

TEST_CASE("ClassifyWhiteout knows the OCI markers", "[layer_path]") {
  CHECK(ClassifyWhiteout("a/b")->kind == WhiteoutKind::kNone);
  auto rm = ClassifyWhiteout("a/.wh.b");
  CHECK(rm->kind == WhiteoutKind::kRemove);
  CHECK(rm->target == "a/b");
  CHECK(ClassifyWhiteout(".wh.top")->target == "top");
  auto opq = ClassifyWhiteout("d/.wh..wh..opq");
  CHECK(opq->kind == WhiteoutKind::kOpaque);
  CHECK(opq->target == "d");
  CHECK(ClassifyWhiteout(".wh..wh..opq")->target == ".");
  CHECK(ClassifyWhiteout("d/.wh..wh.plnk")->kind == WhiteoutKind::kAufsMeta);
  CHECK_FALSE(ClassifyWhiteout("d/.wh.").ok());
  CHECK_FALSE(ClassifyWhiteout("d/.wh...").ok());
}

TEST_CASE("cache records round-trip through JSON", "[layer_path]") {
  CHECK(CacheStateName(CacheState::kPulling) == "Pulling");
  CHECK(*ParseCacheState("Incompatible") == CacheState::kIncompatible);
  CHECK_FALSE(ParseCacheState("Done").ok());
  CHECK(CacheKey{CacheKind::kCluster, "", "c"}.ToString() == "ClusterNeuronCache/c");
  CHECK(CacheKey{CacheKind::kNamespaced, "n", "c"}.ToString() == "NeuronCache/n/c");
  CHECK(CacheEntryFromJson(R"({"state":"Bogus"})", "f").status().code() ==
        absl::StatusCode::kDataLoss);
  CHECK(CacheEntryFromJson("[1]", "f").status().code() == absl::StatusCode::kDataLoss);
  RefInfo ref{"",  "sha256:" + std::string(64, 'f'),   "dra", "ns", "p",
              "u", absl::FromUnixMillis(1700000000123)};
  auto back = RefInfoFromJson(RefInfoToJson(ref), "f");
  REQUIRE(back.ok());
  CHECK(back->since == ref.since);
  CHECK(back->user == "dra");
}

}  // namespace
}  // namespace neuron::cache
