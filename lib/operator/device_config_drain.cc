// File: lib/operator/device_config_drain.cc
#include "lib/operator/device_config_drain.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/operator/device_config.h"

namespace neuron::op {
namespace {

using nlohmann::json;

void ReadDrainBool(const json& v, const char* key, bool& out, std::vector<FieldError>& problems) {
  if (const json& b = MemberOrNull(v, key); b.is_boolean()) {
    out = b.get<bool>();
  } else if (!b.is_null()) {
    problems.push_back({absl::StrCat("spec.upgradePolicy.drain.", key), "must be true or false"});
  }
}

bool RequestsNeuron(const json& containers) {
  if (!containers.is_array()) return false;
  for (const json& c : containers) {
    const json& res = MemberOrNull(c, "resources");
    for (const char* kind : {"requests", "limits"}) {
      const json& r = MemberOrNull(res, kind);
      if (!r.is_object()) continue;
      for (const auto& [name, _] : r.items()) {
        if (absl::StartsWith(name, "aws.amazon.com/neuron")) return true;
      }
    }
  }
  return false;
}

bool OwnedByDaemonSet(const json& pod) {
  const json& owners = MemberOrNull(MemberOrNull(pod, "metadata"), "ownerReferences");
  if (!owners.is_array()) return false;
  for (const json& o : owners) {
    if (StringMember(o, "kind") == "DaemonSet") return true;
  }
  return false;
}

}  // namespace

namespace internal {

void ReadDrainPolicy(const json& drain, DrainPolicy& p, std::vector<FieldError>& problems) {
  ReadDrainBool(drain, "enable", p.enable, problems);
  ReadDrainBool(drain, "deleteEmptyDirData", p.delete_emptydir_data, problems);
  ReadDrainBool(drain, "force", p.force, problems);
  if (const json& t = MemberOrNull(drain, "timeout"); t.is_string()) {
    absl::Duration d;
    if (!absl::ParseDuration(t.get<std::string>(), &d) || d <= absl::ZeroDuration()) {
      problems.push_back(
          {"spec.upgradePolicy.drain.timeout", "must be a positive duration such as 10m or 1h"});
    } else {
      p.timeout = d;
    }
  } else if (!t.is_null()) {
    problems.push_back({"spec.upgradePolicy.drain.timeout", "must be a duration string (10m)"});
  }
  if (const json& s = MemberOrNull(drain, "podSelector"); s.is_object()) {
    for (const auto& [k, v] : s.items()) {
      if (v.is_string()) {
        p.pod_selector[k] = v.get<std::string>();
      } else {
        problems.push_back(
            {absl::StrCat("spec.upgradePolicy.drain.podSelector[", k.substr(0, 64), "]"),
             "must be a string"});
      }
    }
  } else if (!s.is_null()) {
    problems.push_back({"spec.upgradePolicy.drain.podSelector", "must be a map of labels"});
  }
}

}  // namespace internal

bool DrainsPod(const json& pod, const DrainPolicy& policy) {
  const json& meta = MemberOrNull(pod, "metadata");
  const std::string phase = StringMember(MemberOrNull(pod, "status"), "phase");
  if (phase == "Succeeded" || phase == "Failed") return false;
  if (OwnedByDaemonSet(pod)) return false;
  if (!MemberOrNull(MemberOrNull(meta, "annotations"), "kubernetes.io/config.mirror").is_null()) {
    return false;
  }
  if (!policy.pod_selector.empty()) {
    const json& labels = MemberOrNull(meta, "labels");
    for (const auto& [k, v] : policy.pod_selector) {
      if (MemberOrNull(labels, k).is_null() || StringMember(labels, k) != v) {
        return false;
      }
    }
    return true;
  }
  const json& spec = MemberOrNull(pod, "spec");
  if (RequestsNeuron(MemberOrNull(spec, "containers")) ||
      RequestsNeuron(MemberOrNull(spec, "initContainers"))) {
    return true;
  }
  const json& claims = MemberOrNull(spec, "resourceClaims");
  return claims.is_array() && !claims.empty();
}

std::string EvictionBlocker(const json& pod, const DrainPolicy& policy) {
  if (policy.delete_emptydir_data) return "";
  const json& volumes = MemberOrNull(MemberOrNull(pod, "spec"), "volumes");
  if (!volumes.is_array()) return "";
  for (const json& v : volumes) {
    if (!MemberOrNull(v, "emptyDir").is_null()) {
      return absl::StrCat("it has emptyDir volume \"", StringMember(v, "name"),
                          "\" (set upgradePolicy.drain.deleteEmptyDirData to evict it)");
    }
  }
  return "";
}

}  // namespace neuron::op
