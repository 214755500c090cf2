// File: tests/cache/oci_manifest_test.cc
// Manifests as registries serve them (OCI, Docker schema 2, indexes) and the ones we refuse.
#include "lib/cache/oci_manifest.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace neuron::cache {
namespace {

using nlohmann::json;

std::string D(char c) { return "sha256:" + std::string(64, c); }

json ImageManifest(const std::string& media_type, int layers = 1) {
  json m = {{"schemaVersion", 2},
            {"config",
             {{"mediaType", "application/vnd.oci.image.config.v1+json"},
              {"digest", D('c')},
              {"size", 163}}},
            {"layers", json::array()}};
  if (!media_type.empty()) m["mediaType"] = media_type;
  for (int i = 0; i < layers; ++i) {
    m["layers"].push_back({{"mediaType", "application/vnd.oci.image.layer.v1.tar+gzip"},
                           {"digest", D('a')},
                           {"size", 1000 + i}});
  }
  return m;
}

json Entry(char c, const std::string& os, const std::string& arch) {
  return {{"mediaType", kOciManifestType},
          {"digest", D(c)},
          {"size", 500},
          {"platform", {{"os", os}, {"architecture", arch}}}};
}

TEST_CASE("an OCI image manifest") {
  auto p = ParseManifest(ImageManifest(kOciManifestType, 2).dump(), kOciManifestType);
  REQUIRE(p.ok());
  REQUIRE(p->manifest.has_value());
  CHECK_FALSE(p->index_choice.has_value());
  CHECK(p->manifest->media_type == kOciManifestType);
  CHECK(p->manifest->config.digest == D('c'));
  CHECK(p->manifest->config.size == 163);
  REQUIRE(p->manifest->layers.size() == 2);
  CHECK(p->manifest->layers[1].size == 1001);
  CHECK(p->manifest->layers[0].media_type == "application/vnd.oci.image.layer.v1.tar+gzip");
}

TEST_CASE("a Docker schema 2 manifest, typed by the Content-Type header only") {
  auto p =
      ParseManifest(ImageManifest("").dump(), std::string(kDockerManifestType) + "; charset=utf-8");
  REQUIRE(p.ok());
  REQUIRE(p->manifest.has_value());
  CHECK(p->manifest->media_type == kDockerManifestType);
  // No type anywhere: OCI allows omitting it, the shape decides.
  auto bare = ParseManifest(ImageManifest("").dump(), "application/json");
  REQUIRE(bare.ok());
  CHECK(bare->manifest->media_type == kOciManifestType);
}

TEST_CASE("an index yields its linux/amd64 child") {
  json index = {{"schemaVersion", 2},
                {"mediaType", kOciIndexType},
                {"manifests", {Entry('1', "linux", "arm64"), Entry('2', "linux", "amd64")}}};
  auto p = ParseManifest(index.dump(), kOciIndexType);
  REQUIRE(p.ok());
  CHECK_FALSE(p->manifest.has_value());
  REQUIRE(p->index_choice.has_value());
  CHECK(p->index_choice->digest == D('2'));
  CHECK(p->index_choice->size == 500);
}

TEST_CASE("a manifest list with a single child yields it whatever its platform") {
  json list = {{"schemaVersion", 2},
               {"mediaType", kDockerListType},
               {"manifests", {Entry('3', "linux", "arm64")}}};
  auto p = ParseManifest(list.dump(), "");
  REQUIRE(p.ok());
  CHECK(p->index_choice->digest == D('3'));
  list["manifests"].push_back(Entry('4', "windows", "amd64"));
  auto none = ParseManifest(list.dump(), "");
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(std::string(none.status().message()), Catch::Contains("linux/amd64"));
}

TEST_CASE("bad manifests are InvalidArgument") {
  json bad_digest = ImageManifest(kOciManifestType);
  bad_digest["layers"][0]["digest"] = "sha256:1234";
  json negative = ImageManifest(kOciManifestType);
  negative["layers"][0]["size"] = -1;
  json schema1 = ImageManifest(kOciManifestType);
  schema1["schemaVersion"] = 1;
  json no_config = ImageManifest(kOciManifestType);
  no_config.erase("config");
  json empty_index = {
      {"schemaVersion", 2}, {"mediaType", kOciIndexType}, {"manifests", json::array()}};
  struct Bad {
    std::string body;
    std::string content_type;
    std::string reason;
  };
  for (const Bad& b : std::vector<Bad>{
           {"{not json", "", "not valid JSON"},
           {"[]", "", "not a JSON object"},
           {bad_digest.dump(), "", "digest"},
           {negative.dump(), "", "size"},
           {schema1.dump(), "", "schemaVersion"},
           {no_config.dump(), "", "config"},
           {empty_index.dump(), "", "no manifests"},
           {ImageManifest("application/vnd.example+json").dump(), "", "unsupported media type"},
           {ImageManifest("").dump(), "text/html", "unsupported media type"},
       }) {
    INFO(b.body);
    auto p = ParseManifest(b.body, b.content_type);
    REQUIRE_FALSE(p.ok());
    CHECK(p.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(p.status().message()), Catch::Contains(b.reason));
  }
}

TEST_CASE("limits: more than 4 MiB or 1000 layers is refused") {
  auto many = ParseManifest(ImageManifest(kOciManifestType, 1001).dump(), "");
  REQUIRE_FALSE(many.ok());
  CHECK_THAT(std::string(many.status().message()), Catch::Contains("1001 layers"));
  CHECK(ParseManifest(ImageManifest(kOciManifestType, 1000).dump(), "").ok());
  std::string big = ImageManifest(kOciManifestType).dump();
  big.insert(big.size() - 1, ",\"pad\":\"" + std::string(kMaxManifestBytes, 'x') + "\"");
  auto huge = ParseManifest(big, kOciManifestType);
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(huge.status().message()), Catch::Contains("at most"));
}

TEST_CASE("the Accept header names all four types") {
  const std::string accept = ManifestAcceptHeader();
  for (const char* t : {kOciManifestType, kOciIndexType, kDockerManifestType, kDockerListType}) {
    CHECK_THAT(accept, Catch::Contains(t));
  }
}

}  // namespace
}  // namespace neuron::cache
