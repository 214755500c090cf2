// The compile cache a ResourceClaim asks for, read from its allocation's configs as the
// kubelet-plugin helper resolves them (list order, the last applicable wins) and as one CDI
// device needs it (all of the claim's requests on this node agree).
#include "lib/dra/claim_cache.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace neuron::dra {
namespace {

using nlohmann::json;

constexpr char kDriver[] = "neuron.aws.com";
constexpr char kPool[] = "node-a";

json Params(const json& cache) {
  json p = {{"apiVersion", "neuron.aws.com/v1"}, {"kind", "NeuronConfig"}};
  if (!cache.is_null()) p["compileCache"] = cache;
  return p;
}

// std::vector, not json: nlohmann reads a braced list of one object as that object.
json Config(const json& params, const std::vector<std::string>& requests = {},
            const std::string& driver = kDriver) {
  return {{"source", "FromClaim"},
          {"requests", requests},
          {"opaque", {{"driver", driver}, {"parameters", params}}}};
}

json Result(const std::string& request, const std::string& pool = kPool) {
  return {{"request", request}, {"driver", kDriver}, {"pool", pool}, {"device", "neurondevice0"}};
}

json Claim(const std::vector<json>& results, const std::vector<json>& configs) {
  return {{"metadata", {{"namespace", "ml"}, {"name", "train"}, {"uid", "u1"}}},
          {"status",
           {{"allocation", {{"devices", {{"results", json(results)}, {"config", json(configs)}}}}},
            {"reservedFor",
             {{{"resource", "pods"}, {"name", "worker-0"}, {"uid", "p0"}, {"apiGroup", ""}},
              {{"resource", "jobs"}, {"name", "j"}, {"uid", "j0"}, {"apiGroup", "batch"}}}}}}};
}

TEST_CASE("a NeuronCache in the claim's namespace, for the pods the claim is reserved for") {
  const json claim = Claim({Result("neurons")}, {Config(Params({{"name", "llama"}}))});
  absl::StatusOr<std::optional<ClaimCache>> c = ReadClaimCache(claim, kDriver, kPool);
  REQUIRE(c.ok());
  REQUIRE(c->has_value());
  const CacheMountRequest& r = (*c)->request;
  CHECK(r.claim_uid == "u1");
  CHECK(r.claim_namespace == "ml");
  CHECK(r.claim_name == "train");
  CHECK(r.kind == "NeuronCache");
  CHECK(r.cache_namespace == "ml");
  CHECK(r.cache_name == "llama");
  CHECK(r.pods == std::vector<PodRef>{{"ml", "worker-0", "p0"}});
  CHECK((*c)->mount_path == "/var/tmp/neuron-compile-cache");
  CHECK(DescribeCache(r.kind, r.cache_namespace, r.cache_name) == "NeuronCache ml/llama");
}

TEST_CASE("a ClusterNeuronCache has no namespace") {
  const json claim = Claim({Result("neurons")},
                           {Config(Params({{"clusterCache", "shared"}, {"mountPath", "/cc"}}))});
  absl::StatusOr<std::optional<ClaimCache>> c = ReadClaimCache(claim, kDriver, kPool);
  REQUIRE(c.ok());
  REQUIRE(c->has_value());
  CHECK((*c)->request.kind == "ClusterNeuronCache");
  CHECK((*c)->request.cache_namespace.empty());
  CHECK((*c)->mount_path == "/cc");
  CHECK(DescribeCache("ClusterNeuronCache", "", "shared") == "ClusterNeuronCache shared");
}

TEST_CASE("no cache: no config, another driver's config, or AWS's fields only") {
  for (const std::vector<json>& configs :
       {std::vector<json>{},
        std::vector<json>{Config(Params({{"name", "x"}}), {}, "gpu.example.com")},
        std::vector<json>{Config(Params(nullptr))}}) {
    INFO(json(configs).dump());
    absl::StatusOr<std::optional<ClaimCache>> c =
        ReadClaimCache(Claim({Result("neurons")}, configs), kDriver, kPool);
    REQUIRE(c.ok());
    CHECK_FALSE(c->has_value());
  }
}

TEST_CASE("the last config naming a cache wins; one without a cache does not unset it") {
  const json claim = Claim({Result("neurons")},
                           {Config(Params({{"name", "from-class"}})),
                            Config(Params({{"name", "from-claim"}})), Config(Params(nullptr))});
  absl::StatusOr<std::optional<ClaimCache>> c = ReadClaimCache(claim, kDriver, kPool);
  REQUIRE(c.ok());
  REQUIRE(c->has_value());
  CHECK((*c)->request.cache_name == "from-claim");
}

TEST_CASE("the claim's requests on this node must agree on the cache") {
  const json cache_for_a = Config(Params({{"name", "llama"}}), {"a"});
  absl::StatusOr<std::optional<ClaimCache>> c =
      ReadClaimCache(Claim({Result("a"), Result("b")}, {cache_for_a}), kDriver, kPool);
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(c.status().message()),
             Catch::Contains("ResourceClaim ml/train: its requests are configured with different "
                             "NeuronConfig compileCache values"));
  // The same cache for both, or b on another node: fine.
  const json cache_for_b = Config(Params({{"name", "llama"}}), {"b"});
  CHECK(
      ReadClaimCache(Claim({Result("a"), Result("b")}, {cache_for_a, cache_for_b}), kDriver, kPool)
          ->has_value());
  CHECK(ReadClaimCache(Claim({Result("a"), Result("b", "node-b")}, {cache_for_a}), kDriver, kPool)
            ->has_value());
  // A subrequest takes its parent's config.
  CHECK(ReadClaimCache(Claim({Result("a/big")}, {cache_for_a}), kDriver, kPool)->has_value());
}

TEST_CASE("an invalid config is an error naming the request") {
  const json claim = Claim({Result("neurons")}, {Config(Params({{"name", "a"}, {"name2", "b"}}))});
  absl::StatusOr<std::optional<ClaimCache>> c = ReadClaimCache(claim, kDriver, kPool);
  REQUIRE_FALSE(c.ok());
  CHECK_THAT(std::string(c.status().message()),
             Catch::Contains("config for request \"neurons\": NeuronConfig: compileCache: unknown "
                             "field \"name2\""));
}

}  // namespace
}  // namespace neuron::dra
