// File: lib/dra/claim_cache.cc
#include "lib/dra/claim_cache.h"

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/dra/claim_allocation.h"
#include "lib/dra/neuron_config.h"

namespace neuron::dra {
namespace {

using nlohmann::json;

absl::StatusOr<std::optional<CompileCacheConfig>> CacheFor(const json& configs,
                                                           const std::string& request,
                                                           const std::string& driver) {
  std::optional<CompileCacheConfig> out;
  if (!configs.is_array()) return out;
  for (const json& config : configs) {
    const json* opaque = Member(config, "opaque");
    if (opaque == nullptr || StringMember(*opaque, "driver") != driver ||
        !ConfigApplies(config, request)) {
      continue;
    }
    absl::StatusOr<OpaqueConfig> parsed =
        ParseOpaqueConfig(MemberOrNull(*opaque, "parameters").dump());
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("config for request \"", request, "\": ", parsed.status().message()));
    }
    if (parsed->neuron && parsed->neuron->compile_cache) out = parsed->neuron->compile_cache;
  }
  return out;
}

// The pods the claim is reserved for (the scheduler writes them before the kubelet prepares).
std::vector<PodRef> ReservedPods(const json& claim, const std::string& ns) {
  std::vector<PodRef> pods;
  const json& reserved = MemberOrNull(claim, {"status", "reservedFor"});
  if (!reserved.is_array()) return pods;
  for (const json& r : reserved) {
    if (StringMember(r, "resource") == "pods" && StringMember(r, "apiGroup").empty()) {
      pods.push_back({ns, StringMember(r, "name"), StringMember(r, "uid")});
    }
  }
  return pods;
}

ClaimCache MakeClaimCache(const json& claim, const CompileCacheConfig& c) {
  ClaimCache out;
  CacheMountRequest& r = out.request;
  r.claim_uid = StringAt(claim, {"metadata", "uid"});
  r.claim_namespace = StringAt(claim, {"metadata", "namespace"});
  r.claim_name = StringAt(claim, {"metadata", "name"});
  r.kind = c.kind;
  r.cache_namespace = c.kind == kNeuronCacheKind ? r.claim_namespace : "";
  r.cache_name = c.name;
  r.pods = ReservedPods(claim, r.claim_namespace);
  out.mount_path = c.mount_path;
  return out;
}

}  // namespace

absl::StatusOr<std::optional<ClaimCache>> ReadClaimCache(const json& claim,
                                                         std::string_view driver_view,
                                                         std::string_view pool_view) {
  const std::string driver(driver_view), pool(pool_view);
  const json& devices = MemberOrNull(claim, {"status", "allocation", "devices"});
  const json& results = MemberOrNull(devices, "results");
  if (!results.is_array()) return std::nullopt;  // not allocated: ReadClaimAllocation says so
  // What the first of our requests has; every other must have the same (or the same none).
  std::optional<std::optional<CompileCacheConfig>> first;
  for (const json& r : results) {
    if (StringMember(r, "driver") != driver || StringMember(r, "pool") != pool) continue;
    absl::StatusOr<std::optional<CompileCacheConfig>> c =
        CacheFor(MemberOrNull(devices, "config"), StringMember(r, "request"), driver);
    if (!c.ok()) return c.status();
    if (!first) {
      first = *std::move(c);
    } else if (*first != *c) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ResourceClaim ", StringAt(claim, {"metadata", "namespace"}), "/",
          StringAt(claim, {"metadata", "name"}),
          ": its requests are configured with different NeuronConfig compileCache values (or "
          "some with none); one claim's containers share one set of mounts"));
    }
  }
  if (!first || !*first) return std::nullopt;
  return MakeClaimCache(claim, **first);
}

std::string DescribeCache(const std::string& kind, const std::string& ns, const std::string& name) {
  return absl::StrCat(kind, " ", ns, ns.empty() ? "" : "/", name);
}

}  // namespace neuron::dra
