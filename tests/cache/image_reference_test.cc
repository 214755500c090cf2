// File: tests/cache/image_reference_test.cc
// Image references and digests: the normalisation docker applies, and the inputs it rejects.
#include "lib/cache/image_reference.h"

#include <catch2/catch.hpp>

#include "lib/cache/digest.h"

namespace neuron::cache {
namespace {

const std::string kDigest =
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

TEST_CASE("a bare name is docker.io/library/<name>:latest") {
  auto r = ParseImageReference("ubuntu");
  REQUIRE(r.ok());
  CHECK(r->registry == "docker.io");
  CHECK(r->repository == "library/ubuntu");
  CHECK(r->tag == "latest");
  CHECK(r->digest.empty());
  CHECK(r->ToString() == "docker.io/library/ubuntu:latest");
  CHECK(RegistryEndpoint(r->registry) == "registry-1.docker.io");
}

TEST_CASE("a registry with a port, nested repository and tag") {
  auto r = ParseImageReference("host:5000/a/b:tag");
  REQUIRE(r.ok());
  CHECK(r->registry == "host:5000");
  CHECK(r->repository == "a/b");
  CHECK(r->tag == "tag");
  CHECK(RegistryEndpoint(r->registry) == "host:5000");
  auto local = ParseImageReference("localhost/cache");
  REQUIRE(local.ok());
  CHECK(local->registry == "localhost");
  CHECK(local->repository == "cache");
}

TEST_CASE("a user repository on docker.io keeps its namespace") {
  auto r = ParseImageReference("neuron/cache:v1.2.3-rc_1");
  REQUIRE(r.ok());
  CHECK(r->registry == "docker.io");
  CHECK(r->repository == "neuron/cache");
  CHECK(r->tag == "v1.2.3-rc_1");
}

TEST_CASE("digest references, with and without a tag") {
  auto r = ParseImageReference("a/b@" + kDigest);
  REQUIRE(r.ok());
  CHECK(r->repository == "a/b");
  CHECK(r->tag.empty());
  CHECK(r->digest == kDigest);
  CHECK(r->ToString() == "docker.io/a/b@" + kDigest);
  auto both = ParseImageReference("127.0.0.1:5000/x:v1@" + kDigest);
  REQUIRE(both.ok());
  CHECK(both->registry == "127.0.0.1:5000");
  CHECK(both->tag == "v1");
  CHECK(both->digest == kDigest);
}

TEST_CASE("bad references are InvalidArgument with the reason") {
  struct Bad {
    std::string text;
    std::string reason;
  };
  for (const Bad& b : std::vector<Bad>{
           {"", "empty"},
           {"Ubuntu", "lowercase"},
           {"a/b@sha256:abc", "digest"},
           {"a/b@md5:" + std::string(32, 'a'), "digest"},
           {"a/b:", "tag"},
           {"a/b:-x", "tag"},
           {"a/b:" + std::string(129, 'x'), "tag"},
           {"host:99999/a", "registry"},
           {"host:/a", "registry"},
           {"a//b", "component"},
           {"a/b-/c", "component"},
           {"a/.b", "component"},
           {":tag", "repository"},
           {"host:5000/", "component"},
       }) {
    INFO(b.text);
    auto r = ParseImageReference(b.text);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(r.status().message()), Catch::Contains(b.reason));
  }
}

TEST_CASE("OCI digests are sha256:<hex>") {
  CHECK(Sha256Digest("") == kDigest);
  CHECK(Sha256Digest("hello world") ==
        "sha256:b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9");
}

TEST_CASE("IsValidDigest accepts only sha256 with 64 lowercase hex") {
  CHECK(IsValidDigest(kDigest));
  CHECK_FALSE(IsValidDigest(""));
  CHECK_FALSE(IsValidDigest("sha256:"));
  CHECK_FALSE(IsValidDigest(kDigest.substr(0, kDigest.size() - 1)));
  CHECK_FALSE(IsValidDigest(kDigest + "0"));
  std::string upper = kDigest;
  upper[10] = 'B';
  CHECK_FALSE(IsValidDigest(upper));
  CHECK_FALSE(IsValidDigest("sha512:" + kDigest.substr(7)));
}

}  // namespace
}  // namespace neuron::cache
