// ClaimSource over the API server: GET resource.k8s.io/<version>/namespaces/<ns>/resourceclaims/
// <name>, the version chosen once by discovery (v1, else v1beta1: kubelets and API servers
// 1.32/1.33). The kubelet calls NodePrepareResources only for claims already allocated, so a
// plain GET is current enough; no watch or cache is kept for a call that happens once per pod.
#ifndef NEURON_LIB_DRA_API_CLAIM_SOURCE_H_
#define NEURON_LIB_DRA_API_CLAIM_SOURCE_H_

#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "lib/dra/neuron_preparer.h"
#include "lib/dra/resource_slice_json.h"
#include "lib/k8s/rest_client.h"

namespace neuron::dra {

class ApiClaimSource final : public ClaimSource {
 public:
  explicit ApiClaimSource(k8s::RestClient& client) : client_(client) {}
  // NotFound when the claim is gone; FailedPrecondition when no resource.k8s.io version with
  // ResourceClaims is served; the API error otherwise.
  absl::StatusOr<nlohmann::json> Get(const ClaimRef& claim) override;

 private:
  absl::StatusOr<ResourceApi> Api();

  k8s::RestClient& client_;
  absl::Mutex mu_;
  std::optional<ResourceApi> api_ ABSL_GUARDED_BY(mu_);
};

}  // namespace neuron::dra

#endif  // NEURON_LIB_DRA_API_CLAIM_SOURCE_H_
