// File: lib/cache/pull_secrets.cc
#include "lib/cache/pull_secrets.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/cache/registry_auth.h"

namespace neuron::cache {

absl::StatusOr<std::vector<std::string>> DockerConfigsFromSecrets(
    const std::vector<nlohmann::json>& secrets) {
  std::vector<std::string> out;
  for (const nlohmann::json& secret : secrets) {
    const std::string name = StringAt(secret, {"metadata", "name"});
    const nlohmann::json& data = MemberOrNull(secret, "data");
    std::string encoded = StringMember(data, ".dockerconfigjson");
    bool legacy = false;
    if (encoded.empty()) {
      encoded = StringMember(data, ".dockercfg");
      legacy = true;
    }
    std::string decoded;
    if (encoded.empty() || !absl::Base64Unescape(encoded, &decoded)) {
      return absl::InvalidArgumentError(absl::StrCat("pull secret ", name,
                                                     " holds no base64 .dockerconfigjson (type ",
                                                     StringMember(secret, "type", "unset"), ")"));
    }
    // .dockercfg is the "auths" map itself.
    out.push_back(legacy ? absl::StrCat("{\"auths\":", decoded, "}") : decoded);
  }
  return out;
}

CredentialLookup LookupFromDockerConfigs(std::vector<std::string> configs) {
  return [configs = std::move(configs)](const std::string& host) -> std::optional<Credentials> {
    for (const std::string& config : configs) {
      absl::StatusOr<std::optional<Credentials>> found = LookupDockerConfig(config, host);
      if (found.ok() && found->has_value()) return **found;
    }
    return std::nullopt;
  };
}

}  // namespace neuron::cache
