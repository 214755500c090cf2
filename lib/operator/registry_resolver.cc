// File: lib/operator/registry_resolver.cc
#include "lib/operator/registry_resolver.h"

#include "absl/strings/str_cat.h"
#include "lib/cache/cache_api.h"
#include "lib/cache/image_reference.h"
#include "lib/cache/pull_secrets.h"

namespace neuron::op {

RegistryDigestResolver::RegistryDigestResolver(k8s::RestClient& client,
                                               std::string operator_namespace,
                                               cache::RegistryOptions registry)
    : client_(client),
      operator_namespace_(std::move(operator_namespace)),
      registry_(std::move(registry)) {}

absl::StatusOr<std::string> RegistryDigestResolver::Resolve(const cache::CacheSpec& spec) {
  absl::StatusOr<cache::ImageReference> ref = cache::ParseImageReference(spec.image);
  if (!ref.ok()) return ref.status();
  if (!ref->digest.empty()) return ref->digest;
  const std::string ns =
      spec.kind == cache::kClusterNeuronCacheKind ? operator_namespace_ : spec.namespace_;
  std::vector<nlohmann::json> secrets;
  for (const std::string& name : spec.pull_secrets) {
    absl::StatusOr<nlohmann::json> secret = client_.Get({"", "v1", "secrets", true}, ns, name);
    if (!secret.ok()) {
      return absl::Status(secret.status().code(), absl::StrCat("pull secret ", ns, "/", name, ": ",
                                                               secret.status().message()));
    }
    secrets.push_back(*std::move(secret));
  }
  absl::StatusOr<std::vector<std::string>> configs = cache::DockerConfigsFromSecrets(secrets);
  if (!configs.ok()) return configs.status();
  absl::StatusOr<cache::ResolvedImage> resolved =
      registry_.Resolve(*ref, cache::LookupFromDockerConfigs(*std::move(configs)));
  if (!resolved.ok()) return resolved.status();
  return resolved->digest;
}

}  // namespace neuron::op
