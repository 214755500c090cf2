#include "lib/k8s/discovery.h"

#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/base/status_macros.h"
#include "lib/k8s/errors.h"

namespace neuron::k8s {

absl::StatusOr<std::vector<ApiResourceInfo>> Discovery::Resources(const std::string& group,
                                                                  const std::string& version) {
  const std::string path =
      group.empty() ? absl::StrCat("/api/", version) : absl::StrCat("/apis/", group, "/", version);
  {
    absl::MutexLock lock(&mu_);
    if (auto it = cache_.find(path); it != cache_.end()) return it->second;
  }
  absl::StatusOr<nlohmann::json> j = client_.GetPath(path);
  std::vector<ApiResourceInfo> out;
  if (!j.ok()) {
    if (!absl::IsNotFound(j.status())) return j.status();
  } else {
    const nlohmann::json* resources = Member(*j, "resources");
    if (resources == nullptr || !resources->is_array()) {
      return absl::DataLossError(absl::StrCat("k8s discovery ", path, ": no resources array"));
    }
    for (const auto& r : *resources) {
      ApiResourceInfo info;
      info.name = StringMember(r, "name");
      if (info.name.empty()) continue;
      info.kind = StringMember(r, "kind");
      info.namespaced = BoolOf(Member(r, "namespaced"));
      if (const nlohmann::json* verbs = Member(r, "verbs"); verbs && verbs->is_array()) {
        for (const auto& v : *verbs) {
          if (v.is_string()) info.verbs.push_back(v.get<std::string>());
        }
      }
      out.push_back(std::move(info));
    }
  }
  absl::MutexLock lock(&mu_);
  cache_[path] = out;
  return out;
}

absl::StatusOr<std::optional<ResourceRef>> Discovery::Find(const std::string& group,
                                                           const std::string& version,
                                                           const std::string& resource) {
  NEURON_ASSIGN_OR_RETURN(std::vector<ApiResourceInfo> all, Resources(group, version));
  for (const auto& r : all) {
    if (r.name == resource) return ResourceRef{group, version, resource, r.namespaced};
  }
  return std::optional<ResourceRef>();
}

absl::StatusOr<bool> Discovery::IsServed(const std::string& group, const std::string& version,
                                         const std::string& resource) {
  NEURON_ASSIGN_OR_RETURN(std::optional<ResourceRef> r, Find(group, version, resource));
  return r.has_value();
}

absl::StatusOr<std::vector<std::string>> Discovery::GroupVersions(const std::string& group) {
  std::vector<std::string> out;
  if (group.empty()) {
    NEURON_ASSIGN_OR_RETURN(nlohmann::json j, client_.GetPath("/api"));
    if (j.contains("versions") && j["versions"].is_array()) {
      for (const auto& v : j["versions"]) {
        if (v.is_string()) out.push_back(v.get<std::string>());
      }
    }
    return out;
  }
  NEURON_ASSIGN_OR_RETURN(nlohmann::json j, client_.GetPath("/apis"));
  if (!j.contains("groups") || !j["groups"].is_array()) return out;
  for (const auto& g : j["groups"]) {
    if (StringMember(g, "name") != group) continue;
    const std::string preferred = StringAt(g, {"preferredVersion", "version"});
    if (!preferred.empty()) out.push_back(preferred);
    if (const nlohmann::json* versions = Member(g, "versions"); versions && versions->is_array()) {
      for (const auto& v : *versions) {
        const std::string ver = StringMember(v, "version");
        if (!ver.empty() && ver != preferred) out.push_back(ver);
      }
    }
  }
  return out;
}

void Discovery::Invalidate() {
  absl::MutexLock lock(&mu_);
  cache_.clear();
}

}  // namespace neuron::k8s
