// File: tests/cache/registry_auth_test.cc
// Pull-secret lookup (kubernetes.io/dockerconfigjson) and WWW-Authenticate challenges.
#include "lib/cache/registry_auth.h"

#include <catch2/catch.hpp>

#include "absl/strings/escaping.h"

namespace neuron::cache {
namespace {

TEST_CASE("dockerconfigjson: auth field, exact host:port key") {
  const std::string cfg =
      R"({"auths":{"127.0.0.1:5000":{"auth":")" + absl::Base64Escape("user:pa:ss") + R"("}}})";
  auto c = LookupDockerConfig(cfg, "127.0.0.1:5000");
  REQUIRE(c.ok());
  REQUIRE(c->has_value());
  CHECK((*c)->username == "user");
  CHECK((*c)->password == "pa:ss");  // only the first ':' separates
  auto other = LookupDockerConfig(cfg, "127.0.0.1:5001");
  REQUIRE(other.ok());
  CHECK_FALSE(other->has_value());
}

TEST_CASE("dockerconfigjson: username/password fields and URL-style keys") {
  const std::string cfg =
      R"({"auths":{"https://registry.example.com/v1/":{"username":"u","password":"p"},
                   "https://index.docker.io/v1/":{"auth":")" +
      absl::Base64Escape("hub:secret") + R"("}}})";
  auto c = LookupDockerConfig(cfg, "registry.example.com");
  REQUIRE(c.ok());
  REQUIRE(c->has_value());
  CHECK((*c)->username == "u");
  CHECK((*c)->password == "p");
  for (const char* host : {"docker.io", "registry-1.docker.io", "index.docker.io"}) {
    INFO(host);
    auto hub = LookupDockerConfig(cfg, host);
    REQUIRE(hub.ok());
    REQUIRE(hub->has_value());
    CHECK((*hub)->username == "hub");
  }
}

TEST_CASE("dockerconfigjson: an exact key wins over a normalised one") {
  const std::string cfg =
      R"({"auths":{"https://r.example/v1/":{"username":"url","password":"1"},
                   "r.example":{"username":"exact","password":"2"}}})";
  auto c = LookupDockerConfig(cfg, "r.example");
  REQUIRE(c.ok());
  CHECK((*c)->username == "exact");
}

TEST_CASE("dockerconfigjson: malformed input is InvalidArgument, missing auths is no entry") {
  auto none = LookupDockerConfig(R"({"credsStore":"x"})", "r.example");
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());
  for (const std::string& bad :
       {std::string("not json"), std::string("[1]"), std::string(R"({"auths":[]})"),
        std::string(R"({"auths":{"r.example":{"auth":"%%%"}}})"),
        std::string(R"({"auths":{"r.example":{"auth":")") + absl::Base64Escape("nocolon") + "\"}}}",
        std::string(R"({"auths":{"r.example":{"identitytoken":"t"}}})"),
        std::string(R"({"auths":{"r.example":"str"}})")}) {
    INFO(bad);
    auto c = LookupDockerConfig(bad, "r.example");
    REQUIRE_FALSE(c.ok());
    CHECK(c.status().code() == absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("challenge: Bearer with quoted parameters") {
  auto c = ParseAuthChallenge(
      R"(Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/ubuntu:pull")");
  REQUIRE(c.ok());
  CHECK(c->scheme == "Bearer");
  CHECK(c->params.at("realm") == "https://auth.docker.io/token");
  CHECK(c->params.at("service") == "registry.docker.io");
  CHECK(c->params.at("scope") == "repository:library/ubuntu:pull");
}

TEST_CASE("challenge: Basic, any case, spaces, escapes and bare tokens") {
  auto c = ParseAuthChallenge(R"(  basic   Realm = "a \"quoted\" realm" , charset=UTF-8 )");
  REQUIRE(c.ok());
  CHECK(c->scheme == "Basic");
  CHECK(c->params.at("realm") == "a \"quoted\" realm");
  CHECK(c->params.at("charset") == "UTF-8");
  auto bare = ParseAuthChallenge("Basic");
  REQUIRE(bare.ok());
  CHECK(bare->params.empty());
  // A second challenge in the same header is ignored.
  auto two = ParseAuthChallenge(R"(Bearer realm="r", Basic realm="b")");
  REQUIRE(two.ok());
  CHECK(two->params.at("realm") == "r");
  CHECK(two->params.size() == 1);
}

TEST_CASE("challenge: malformed headers") {
  CHECK_FALSE(ParseAuthChallenge("").ok());
  CHECK_FALSE(ParseAuthChallenge("   ").ok());
  CHECK_FALSE(ParseAuthChallenge(R"(Bearer realm="unterminated)").ok());
  CHECK(ParseAuthChallenge("Bearer realm=\"unterminated").status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("Basic authorization header") {
  CHECK(BasicAuthorization({"user", "pass"}) == "Basic dXNlcjpwYXNz");
}

}  // namespace
}  // namespace neuron::cache
