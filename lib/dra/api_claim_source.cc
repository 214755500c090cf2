// File: lib/dra/api_claim_source.cc
#include "lib/dra/api_claim_source.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/k8s/discovery.h"

namespace neuron::dra {
namespace {

constexpr char kGroup[] = "resource.k8s.io";
constexpr char kResource[] = "resourceclaims";

}  // namespace

absl::StatusOr<ResourceApi> ApiClaimSource::Api() {
  absl::MutexLock lock(&mu_);
  if (api_) return *api_;
  k8s::Discovery discovery(client_);
  for (const auto& [api, version] :
       {std::pair{ResourceApi::kV1, "v1"}, std::pair{ResourceApi::kV1beta1, "v1beta1"}}) {
    absl::StatusOr<bool> served = discovery.IsServed(kGroup, version, kResource);
    if (!served.ok()) return served.status();
    if (*served) {
      api_ = api;
      return api;
    }
  }
  return absl::FailedPreconditionError(
      "the API server serves no ResourceClaims (resource.k8s.io/v1 or v1beta1)");
}

absl::StatusOr<nlohmann::json> ApiClaimSource::Get(const ClaimRef& claim) {
  absl::StatusOr<ResourceApi> api = Api();
  if (!api.ok()) return api.status();
  const k8s::ResourceRef ref{kGroup, *api == ResourceApi::kV1 ? "v1" : "v1beta1", kResource, true};
  absl::StatusOr<nlohmann::json> got = client_.Get(ref, claim.ns, claim.name);
  if (!got.ok() && absl::IsNotFound(got.status())) {
    // A version switched off since discovery looks the same as a deleted claim: ask again next
    // time.
    absl::MutexLock lock(&mu_);
    api_.reset();
  }
  return got;
}

}  // namespace neuron::dra
