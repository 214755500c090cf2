// NeuronConfig.compileCache: a NeuronCache in the claim's namespace or a ClusterNeuronCache,
// mounted at neuronx-cc's default path unless mountPath says otherwise; every mistake is an
// InvalidArgument that says what is wrong, and AWS's fields keep working beside it.
#include <catch2/catch.hpp>
#include <string>

#include "lib/dra/neuron_config.h"

namespace neuron::dra {
namespace {

const std::string kHead = R"({"apiVersion": "neuron.aws.com/v1", "kind": "NeuronConfig", )";

std::string WithCache(const std::string& cache) {
  return kHead + R"("compileCache": )" + cache + "}";
}

std::string Error(const std::string& in) {
  absl::StatusOr<OpaqueConfig> c = ParseOpaqueConfig(in);
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_FALSE(ParseNeuronConfig(in).ok());  // a NeuronConfig either way
  return std::string(c.status().message());
}

TEST_CASE("a namespaced cache, mounted where neuronx-cc looks by default") {
  absl::StatusOr<NeuronConfig> c = ParseNeuronConfig(WithCache(R"({"name": "llama-70b.v2"})"));
  REQUIRE(c.ok());
  REQUIRE(c->compile_cache.has_value());
  CHECK(*c->compile_cache ==
        CompileCacheConfig{"NeuronCache", "llama-70b.v2", "/var/tmp/neuron-compile-cache"});
  CHECK_FALSE(c->logical_neuron_core.has_value());
}

TEST_CASE("a cluster cache at its own path, beside AWS's logicalNeuronCore") {
  absl::StatusOr<OpaqueConfig> c = ParseOpaqueConfig(
      kHead +
      R"("logicalNeuronCore": 1, "compileCache": {"mountPath": "/cache/neuron", "clusterCache":
         "shared"}})");
  REQUIRE(c.ok());
  REQUIRE(c->neuron.has_value());
  CHECK(c->neuron->logical_neuron_core == 1);
  CHECK(c->neuron->compile_cache ==
        CompileCacheConfig{"ClusterNeuronCache", "shared", "/cache/neuron"});
}

TEST_CASE("exactly one of name and clusterCache") {
  CHECK_THAT(Error(WithCache(R"({"name": "a", "clusterCache": "b"})")),
             Catch::Contains("NeuronConfig: compileCache needs only one of name (a NeuronCache in "
                             "the claim's namespace) or clusterCache (a ClusterNeuronCache)"));
  CHECK_THAT(Error(WithCache(R"({})")), Catch::Contains("compileCache needs one of name"));
  CHECK_THAT(Error(WithCache(R"({"mountPath": "/x"})")),
             Catch::Contains("compileCache needs one of name"));
}

TEST_CASE("the mount path is absolute, without .., and not the root") {
  const auto path = [](const std::string& p) {
    return Error(WithCache(R"({"name": "a", "mountPath": ")" + p + "\"}"));
  };
  CHECK_THAT(path("var/tmp/cache"),
             Catch::Contains("compileCache mountPath \"var/tmp/cache\" must be an absolute path"));
  CHECK_THAT(path(""), Catch::Contains("must be an absolute path"));
  CHECK_THAT(path("/var/../etc"), Catch::Contains("must not contain \"..\""));
  CHECK_THAT(path("/cache/.."), Catch::Contains("must not contain \"..\""));
  CHECK_THAT(path("/"), Catch::Contains("would hide the container's root"));
  CHECK_THAT(path("//"), Catch::Contains("would hide the container's root"));
  CHECK_THAT(path("/a\\nb"), Catch::Contains("must be printable ASCII"));
  CHECK_THAT(path("/\\u00fc"), Catch::Contains("must be printable ASCII"));
  CHECK_THAT(path("/" + std::string(5000, 'a')), Catch::Contains("is too long"));
  // ".." inside a name is just a name.
  CHECK(ParseNeuronConfig(WithCache(R"({"name": "a", "mountPath": "/a..b/..c/"})")).ok());
}

TEST_CASE("cache names are Kubernetes object names") {
  for (const char* bad : {"", "Llama", "-a", "a-", "a_b", "a/b", "../x"}) {
    INFO(bad);
    CHECK_THAT(Error(WithCache(std::string(R"({"name": ")") + bad + "\"}")),
               Catch::Contains("is not a valid object name"));
  }
  CHECK_THAT(Error(WithCache(R"({"clusterCache": "x_y"})")),
             Catch::Contains("compileCache clusterCache \"x_y\" is not a valid object name"));
  CHECK_THAT(Error(WithCache("{\"name\": \"" + std::string(254, 'a') + "\"}")),
             Catch::Contains("is not a valid object name"));
  CHECK(ParseNeuronConfig(WithCache("{\"name\": \"" + std::string(253, 'a') + "\"}")).ok());
}

TEST_CASE("mistyped, unknown and repeated compileCache fields are refused") {
  CHECK_THAT(Error(WithCache(R"("llama")")), Catch::Contains("compileCache must be an object"));
  CHECK_THAT(Error(WithCache("null")), Catch::Contains("compileCache must be an object"));
  CHECK_THAT(Error(WithCache(R"({"name": 1})")),
             Catch::Contains("compileCache name must be a string"));
  CHECK_THAT(Error(WithCache(R"({"name": "a", "mountpath": "/x"})")),
             Catch::Contains("compileCache: unknown field \"mountpath\""));
  CHECK_THAT(Error(WithCache(R"({"name": "a", "name": "b"})")),
             Catch::Contains("compileCache: duplicate field \"name\""));
  CHECK_THAT(Error(kHead + R"("compileCache": {"name": "a"}, "compileCache": {"name": "a"}})"),
             Catch::Contains("duplicate field \"compileCache\""));
  absl::StatusOr<OpaqueConfig> us = ParseOpaqueConfig(R"({"apiVersion": "neuron.aws.com/v1",
      "kind": "UltraServerConfig", "ultraserverMode": 4, "compileCache": {"name": "a"}})");
  REQUIRE_FALSE(us.ok());
  CHECK_THAT(std::string(us.status().message()),
             Catch::Contains("UltraServerConfig: unknown field \"compileCache\" (a field of "
                             "NeuronConfig"));
}

}  // namespace
}  // namespace neuron::dra
