// File: tests/cache/registry_client_test.cc
// The registry client against a real registry (Debian's docker-registry): an image pushed with
// scripts/pack-neuron-cache.sh is resolved and its blobs pulled and verified, over plain http and
// over TLS with basic auth; mirrors and a registry that is down.
#include "lib/cache/registry_client.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "lib/cache/digest.h"
#include "tests/testing/local_registry.h"

namespace neuron::cache {
namespace {

using neuron::testing::LocalRegistry;
using neuron::testing::LocalRegistryOptions;

std::string ReadBinaryFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A directory shaped like a Neuron compile cache, with a NEFF big enough to span many chunks.
std::string MakeCacheDir(const std::string& root) {
  const std::string module = root + "/neuronxcc-2.15.128.0/MODULE_1234567890abcdef";
  std::filesystem::create_directories(module);
  std::string neff(300000, '\0');
  for (size_t i = 0; i < neff.size(); ++i) neff[i] = static_cast<char>((i * 7919) % 251);
  std::ofstream(module + "/model.neff", std::ios::binary) << neff;
  std::ofstream(module + "/compile_flags.json") << R"(["--target=trn1"])";
  std::ofstream(module + "/model.done") << "";
  return root;
}

ImageReference Ref(const std::string& text) {
  auto r = ParseImageReference(text);
  REQUIRE(r.ok());
  return *r;
}

// Fetches every layer of `img`, checks the bytes hash to their digest and returns the listing of
// the first layer.
std::string FetchLayers(RegistryClient& client, const ImageReference& ref, const ResolvedImage& img,
                        const CredentialLookup& creds, const std::string& dir) {
  std::string listing;
  for (size_t i = 0; i < img.manifest.layers.size(); ++i) {
    const Descriptor& layer = img.manifest.layers[i];
    const std::string path = dir + "/layer" + std::to_string(i) + ".tar.gz";
    uint64_t last = 0;
    absl::Status s = client.FetchBlob(ref, layer, creds, path, [&](uint64_t n) {
      CHECK(n > last);
      last = n;
      return true;
    });
    REQUIRE(s.ok());
    CHECK(last == layer.size);
    CHECK(Sha256Digest(ReadBinaryFile(path)) == layer.digest);
    if (i == 0) {
      REQUIRE(neuron::testing::RunCommand({"/usr/bin/tar", "-tzf", path}, dir + "/tar.log") == 0);
      listing = ReadBinaryFile(dir + "/tar.log");
    }
  }
  return listing;
}

TEST_CASE("plain http registry: resolve by tag and digest, fetch and verify every layer") {
  LocalRegistry reg;
  REQUIRE(reg.status().ok());
  const std::string cache = MakeCacheDir(reg.scratch_dir() + "/cache");
  absl::StatusOr<std::string> pushed = reg.Push(cache, "neuron/cache:v1");
  INFO(pushed.status().ToString());
  REQUIRE(pushed.ok());

  RegistryOptions opts;
  opts.plain_http = {reg.host()};
  RegistryClient client(opts);
  const ImageReference ref = Ref(reg.host() + "/neuron/cache:v1");
  absl::StatusOr<ResolvedImage> img = client.Resolve(ref, {});
  INFO(img.status().ToString());
  REQUIRE(img.ok());
  CHECK(img->digest == *pushed);
  CHECK(img->manifest_digest == *pushed);
  CHECK(img->served_by == reg.host());
  CHECK(img->manifest.media_type == kOciManifestType);
  REQUIRE(img->manifest.layers.size() == 1);
  CHECK(img->manifest.layers[0].media_type == "application/vnd.oci.image.layer.v1.tar+gzip");

  const ImageReference by_digest = Ref(reg.host() + "/neuron/cache@" + *pushed);
  absl::StatusOr<ResolvedImage> again = client.Resolve(by_digest, {});
  REQUIRE(again.ok());
  CHECK(again->digest == *pushed);
  CHECK(again->manifest.layers[0].digest == img->manifest.layers[0].digest);

  const std::string listing = FetchLayers(client, ref, *img, {}, reg.scratch_dir());
  CHECK_THAT(listing, Catch::Contains("./neuronxcc-2.15.128.0/MODULE_1234567890abcdef/model.neff"));
  CHECK_THAT(listing, Catch::Contains("compile_flags.json"));
  const std::string config_path = reg.scratch_dir() + "/config.json";
  REQUIRE(client.FetchBlob(ref, img->manifest.config, {}, config_path).ok());
  CHECK_THAT(ReadBinaryFile(config_path), Catch::Contains("diff_ids"));

  SECTION("a tag or blob the registry does not have is NotFound") {
    auto missing = client.Resolve(Ref(reg.host() + "/neuron/cache:nope"), {});
    CHECK(missing.status().code() == absl::StatusCode::kNotFound);
    Descriptor ghost{"", "sha256:" + std::string(64, '0'), 10};
    absl::Status s = client.FetchBlob(ref, ghost, {}, reg.scratch_dir() + "/ghost");
    CHECK(s.code() == absl::StatusCode::kNotFound);
    CHECK_FALSE(std::filesystem::exists(reg.scratch_dir() + "/ghost"));
  }
  SECTION("a mirror serves while the primary is down") {
    const std::string down = "127.0.0.1:" + std::to_string(neuron::testing::FreeLoopbackPort());
    RegistryOptions mopts;
    mopts.plain_http = {down, reg.host()};
    mopts.mirrors[down] = {reg.host()};
    RegistryClient mirrored(mopts);
    const ImageReference via_primary = Ref(down + "/neuron/cache:v1");
    absl::StatusOr<ResolvedImage> m = mirrored.Resolve(via_primary, {});
    REQUIRE(m.ok());
    CHECK(m->served_by == reg.host());
    CHECK(m->digest == *pushed);
    CHECK(
        mirrored.FetchBlob(via_primary, m->manifest.layers[0], {}, reg.scratch_dir() + "/m").ok());
  }
  SECTION("a registry that is down is Unavailable") {
    reg.Stop();
    auto down = client.Resolve(ref, {});
    REQUIRE_FALSE(down.ok());
    CHECK(down.status().code() == absl::StatusCode::kUnavailable);
    CHECK_THAT(std::string(down.status().message()), Catch::Contains(reg.host()));
  }
}

TEST_CASE("TLS registry with basic auth: credentials, refusals and the CA file") {
  LocalRegistry reg(LocalRegistryOptions{.tls = true, .username = "neuron", .password = "s3cret"});
  INFO(reg.status().ToString());
  REQUIRE(reg.status().ok());
  const std::string cache = MakeCacheDir(reg.scratch_dir() + "/cache");
  absl::StatusOr<std::string> pushed = reg.Push(cache, "team/compiled:2024");
  INFO(pushed.status().ToString());
  REQUIRE(pushed.ok());
  const ImageReference ref = Ref(reg.host() + "/team/compiled:2024");
  auto creds_for = [&](const std::string& user, const std::string& pass) -> CredentialLookup {
    return [&reg, user, pass](const std::string& host) -> std::optional<Credentials> {
      if (host != reg.host()) return std::nullopt;
      return Credentials{user, pass};
    };
  };
  RegistryOptions opts;
  opts.ca_file = reg.ca_file();

  SECTION("the right credentials pull the image") {
    RegistryClient client(opts);
    absl::StatusOr<ResolvedImage> img = client.Resolve(ref, creds_for("neuron", "s3cret"));
    INFO(img.status().ToString());
    REQUIRE(img.ok());
    CHECK(img->digest == *pushed);
    const std::string listing =
        FetchLayers(client, ref, *img, creds_for("neuron", "s3cret"), reg.scratch_dir());
    CHECK_THAT(listing, Catch::Contains("model.neff"));
  }
  SECTION("wrong or missing credentials are PermissionDenied") {
    RegistryClient client(opts);
    auto wrong = client.Resolve(ref, creds_for("neuron", "wrong"));
    REQUIRE_FALSE(wrong.ok());
    CHECK(wrong.status().code() == absl::StatusCode::kPermissionDenied);
    CHECK_THAT(std::string(wrong.status().message()),
               Catch::Contains("registry " + reg.host() +
                               " refused the credentials for repo team/compiled"));
    auto none = client.Resolve(ref, {});
    REQUIRE_FALSE(none.ok());
    CHECK(none.status().code() == absl::StatusCode::kPermissionDenied);
    CHECK_THAT(std::string(none.status().message()), Catch::Contains("none are configured"));
  }
  SECTION("without the CA the certificate problem is named") {
    RegistryClient client(RegistryOptions{});
    auto r = client.Resolve(ref, creds_for("neuron", "s3cret"));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == absl::StatusCode::kUnavailable);
    CHECK_THAT(std::string(r.status().message()), Catch::Contains("certificate"));
  }
  SECTION("a CA file that does not exist is reported, not a crash") {
    opts.ca_file = reg.scratch_dir() + "/missing.pem";
    RegistryClient client(opts);
    auto r = client.Resolve(ref, creds_for("neuron", "s3cret"));
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(std::string(r.status().message()), Catch::Contains("missing.pem"));
  }
}

}  // namespace
}  // namespace neuron::cache
