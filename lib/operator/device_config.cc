// File: lib/operator/device_config.cc
#include "lib/operator/device_config.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/k8s/k8s_time.h"
#include "lib/operator/device_config_cache.h"
#include "lib/operator/device_config_dra.h"
#include "lib/operator/device_config_emulation.h"
#include "lib/operator/device_config_syntax.h"

namespace neuron::op {
namespace {

using nlohmann::json;

// User text quoted in an error, cut to a readable length on a UTF-8 boundary (the message ends
// up in a condition, which the API server caps and which must stay valid UTF-8).
std::string Clip(const std::string& s) {
  constexpr size_t kMax = 80;
  if (s.size() <= kMax) return s;
  size_t end = kMax;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return absl::StrCat(s.substr(0, end), "...");
}

// A string field of the spec: absent or null leaves `out` as it is; any other non-string is a
// problem, never an exception.
void ReadString(const json& spec, const char* key, std::string& out,
                std::vector<FieldError>& problems) {
  const json& v = MemberOrNull(spec, key);
  if (v.is_null()) return;
  if (!v.is_string()) {
    problems.push_back({absl::StrCat("spec.", key), "must be a string"});
    return;
  }
  out = v.get<std::string>();
}

void ReadMetadata(const json& meta, DeviceConfig& dc) {
  dc.name = StringOf(MemberOrNull(meta, "name"));
  dc.ns = StringOf(MemberOrNull(meta, "namespace"));
  dc.uid = StringOf(MemberOrNull(meta, "uid"));
  dc.resource_version = StringOf(MemberOrNull(meta, "resourceVersion"));
  // The server writes these; a malformed value reads as unset rather than failing the object.
  if (const json& g = MemberOrNull(meta, "generation"); g.is_number_integer()) {
    dc.generation = g.get<int64_t>();
  }
  dc.deleting = !MemberOrNull(meta, "deletionTimestamp").is_null();
  if (const json& f = MemberOrNull(meta, "finalizers"); f.is_array()) {
    for (const json& s : f) {
      if (s.is_string()) dc.finalizers.push_back(s.get<std::string>());
    }
  }
  if (auto t = k8s::ParseTime(StringOf(MemberOrNull(meta, "creationTimestamp"))); t.ok()) {
    dc.creation_time = *t;
  }
}

void ReadUpgradePolicy(const json& v, UpgradePolicy& p, std::vector<FieldError>& problems) {
  if (const json& n = MemberOrNull(v, "maxParallel"); n.is_number_integer()) {
    // Read as 64 bits: a huge value must fail the check, not wrap into range.
    const int64_t max = n.get<int64_t>();
    if (max < 1 || max > 10000) {
      problems.push_back({"spec.upgradePolicy.maxParallel", "must be between 1 and 10000"});
    } else {
      p.max_parallel = static_cast<int>(max);
    }
  } else if (!n.is_null()) {
    problems.push_back({"spec.upgradePolicy.maxParallel", "must be an integer"});
  }
  if (const json& t = MemberOrNull(v, "nodeTimeout"); t.is_string()) {
    // Go duration syntax ("15m", "1h30m"), which absl::ParseDuration shares.
    absl::Duration d;
    if (!absl::ParseDuration(t.get<std::string>(), &d) || d <= absl::ZeroDuration()) {
      problems.push_back({"spec.upgradePolicy.nodeTimeout",
                          absl::StrCat("\"", Clip(t.get<std::string>()),
                                       "\" is not a positive duration such as 15m or 1h30m")});
    } else {
      p.node_timeout = d;
    }
  } else if (!t.is_null()) {
    problems.push_back({"spec.upgradePolicy.nodeTimeout", "must be a duration string (15m)"});
  }
  if (const json& b = MemberOrNull(v, "paused"); b.is_boolean()) {
    p.paused = b.get<bool>();
  } else if (!b.is_null()) {
    problems.push_back({"spec.upgradePolicy.paused", "must be true or false"});
  }
  if (const json& d = MemberOrNull(v, "drain"); d.is_object()) {
    internal::ReadDrainPolicy(d, p.drain, problems);
  } else if (!d.is_null()) {
    problems.push_back({"spec.upgradePolicy.drain", "must be an object"});
  }
}

// Long on purpose: one line or block per spec field, in the CRD's order.
void ReadSpec(const json& spec, DeviceConfigSpec& s, std::vector<FieldError>& problems) {
  ReadString(spec, "driversImage", s.drivers_image, problems);
  ReadString(spec, "driverVersion", s.driver_version, problems);
  ReadString(spec, "devicePluginImage", s.device_plugin_image, problems);
  ReadString(spec, "customSchedulerImage", s.custom_scheduler_image, problems);
  ReadString(spec, "schedulerExtensionImage", s.scheduler_extension_image, problems);
  ReadString(spec, "draDriverImage", s.dra_driver_image, problems);
  ReadString(spec, "nodeMetricsImage", s.node_metrics_image, problems);
  ReadString(spec, "nodeAgentImage", s.node_agent_image, problems);
  ReadString(spec, "kubeletRootDir", s.kubelet_root_dir, problems);
  // "/var/lib/kubelet/" names the same directory: keep one spelling for the paths built on it.
  while (s.kubelet_root_dir.size() > 1 && s.kubelet_root_dir.back() == '/') {
    s.kubelet_root_dir.pop_back();
  }
  internal::ReadAllocation(spec, s, problems);

  std::string mode = "kmm";  // the CRD's default; objects from `render -f` may omit it
  ReadString(spec, "driverMode", mode, problems);
  if (mode == "kmm") {
    s.driver_mode = DriverMode::kKmm;
  } else if (mode == "preinstalled") {
    s.driver_mode = DriverMode::kPreinstalled;
  } else {
    problems.push_back({"spec.driverMode", absl::StrCat("unknown mode \"", Clip(mode),
                                                        "\": use kmm or preinstalled")});
  }
  internal::ReadEmulation(spec, s, problems);  // after driverMode: emulation loads no driver
  internal::ReadCompileCache(spec, s, problems);

  if (const json& v = MemberOrNull(spec, "useInTreeDrivers"); v.is_boolean()) {
    s.use_in_tree_drivers = v.get<bool>();
  } else if (!v.is_null()) {
    problems.push_back({"spec.useInTreeDrivers", "must be true or false"});
  }

  if (const json& v = MemberOrNull(spec, "imageRepoSecret"); v.is_object()) {
    const json& name = MemberOrNull(v, "name");
    if (name.is_string()) {
      s.image_repo_secret = name.get<std::string>();
    } else if (!name.is_null()) {
      problems.push_back({"spec.imageRepoSecret.name", "must be a string"});
    }
  } else if (!v.is_null()) {
    problems.push_back({"spec.imageRepoSecret", "must be an object {name: <secret>}"});
  }

  if (const json& v = MemberOrNull(spec, "upgradePolicy"); v.is_object()) {
    ReadUpgradePolicy(v, s.upgrade, problems);
  } else if (!v.is_null()) {
    problems.push_back({"spec.upgradePolicy", "must be an object"});
  }

  if (const json& v = MemberOrNull(spec, "selector"); v.is_object()) {
    for (const auto& [key, value] : v.items()) {
      if (!value.is_string()) {
        problems.push_back({absl::StrCat("spec.selector[", Clip(key), "]"),
                            "label values are strings (quote true, 1, ...)"});
        continue;
      }
      s.selector[key] = value.get<std::string>();
    }
  } else if (!v.is_null()) {
    problems.push_back({"spec.selector", "must be a map of label keys to values"});
  }
}

void CheckMetadata(const DeviceConfig& dc, std::vector<FieldError>& errors) {
  if (!IsDns1035Label(dc.name) || dc.name.size() > kMaxNameLength) {
    errors.push_back(
        {"metadata.name", absl::StrCat("must be at most ", kMaxNameLength,
                                       " lowercase letters, digits and '-', starting with a letter "
                                       "(the operator's objects are named after it)")});
  } else if (dc.ns.size() + 1 + dc.name.size() > 63) {
    errors.push_back({"metadata.name",
                      "namespace and name together must stay within 62 characters (the "
                      "operator labels its objects with <namespace>.<name>)"});
  }
}

}  // namespace

bool DeviceConfig::HasFinalizer() const {
  return std::find(finalizers.begin(), finalizers.end(), kFinalizer) != finalizers.end();
}

absl::StatusOr<DeviceConfig> ParseDeviceConfig(const json& obj) {
  if (!obj.is_object()) return absl::InvalidArgumentError("a DeviceConfig must be an object");
  const json& meta = MemberOrNull(obj, "metadata");
  if (StringOf(MemberOrNull(meta, "name")).empty()) {
    return absl::InvalidArgumentError("a DeviceConfig needs metadata.name");
  }
  DeviceConfig dc;
  dc.api_version = StringOf(MemberOrNull(obj, "apiVersion"));
  ReadMetadata(meta, dc);
  const json& spec = MemberOrNull(obj, "spec");
  if (spec.is_object()) {
    ReadSpec(spec, dc.spec, dc.parse_problems);
  } else if (!spec.is_null()) {
    dc.parse_problems.push_back({"spec", "must be an object"});
  }
  return dc;
}

// Long on purpose: a flat list of independent rules, one block per field in spec order.
std::vector<FieldError> ValidateDeviceConfig(const DeviceConfig& dc) {
  std::vector<FieldError> errors = dc.parse_problems;
  const std::string alpha = absl::StrCat(kGroup, "/v1alpha1");
  const std::string beta = absl::StrCat(kGroup, "/v1beta1");
  if (!dc.api_version.empty() && dc.api_version != alpha && dc.api_version != beta) {
    errors.push_back({"apiVersion", absl::StrCat("must be ", alpha, " or ", beta)});
  }
  CheckMetadata(dc, errors);

  // The rules below hold whatever version the object is read at. The apiserver serves a
  // DeviceConfig at the version the client asks for (conversion None relabels apiVersion), so an
  // object written as v1alpha1 reaches us as v1beta1: each version's required fields were
  // enforced by its own schema when the object was written, and are not ours to re-check.
  const DeviceConfigSpec& s = dc.spec;
  const bool kmm = s.driver_mode == DriverMode::kKmm;
  auto image = [&](const std::string& value, const char* field, bool required) {
    if (value.empty()) {
      if (required) errors.push_back({absl::StrCat("spec.", field), "is required"});
    } else if (!IsImageReference(value)) {
      errors.push_back({absl::StrCat("spec.", field), "is not an image reference (whitespace)"});
    }
  };
  // kmm needs the driver image itself: unlike the seed we add no in-cluster build, whose
  // fallback image lives in OpenShift's internal registry and whose Dockerfile is RHEL-only.
  // driverVersion stays optional, as in the seed (its sample has none): setting it turns on
  // KMM's ordered upgrade.
  image(s.drivers_image, "driversImage", kmm);
  if (kmm && IsImageReference(s.drivers_image) && !HasImageTag(s.drivers_image)) {
    errors.push_back({"spec.driversImage",
                      "must end in a tag (repo:tag): KMM pulls <driversImage>-$KERNEL_VERSION"});
  }
  // Required unless AWS's DRA driver runs (CheckAllocation): without it our binary is what
  // advertises the devices, even where the seed's v1beta1 schema would allow a driver-only spec.
  image(s.device_plugin_image, "devicePluginImage", false);
  image(s.custom_scheduler_image, "customSchedulerImage", false);
  image(s.scheduler_extension_image, "schedulerExtensionImage", false);
  image(s.dra_driver_image, "draDriverImage", false);
  // The seed's v1beta1 schema requires nodeMetricsImage, but it names neuron-monitor, which we
  // do not run (our node agent is nodeAgentImage): optional here.
  image(s.node_metrics_image, "nodeMetricsImage", false);
  image(s.node_agent_image, "nodeAgentImage", false);

  internal::CheckAllocation(s, errors);
  internal::CheckEmulation(s, errors);
  internal::CheckCompileCache(s, errors);

  if (!IsLabelValue(s.driver_version)) {
    errors.push_back({"spec.driverVersion",
                      "must be usable as a label value (KMM labels nodes with it): at most 63 "
                      "letters, digits, '-', '_' and '.'"});
  }
  if (!IsKubeletRootDir(s.kubelet_root_dir)) {
    errors.push_back(
        {"spec.kubeletRootDir",
         absl::StrCat("\"", Clip(s.kubelet_root_dir),
                      "\" is not an absolute directory path (no '..', no whitespace)")});
  }
  if (!s.image_repo_secret.empty() && !IsDns1123Subdomain(s.image_repo_secret)) {
    errors.push_back({"spec.imageRepoSecret.name", "is not a valid Secret name"});
  }
  for (const auto& [k, v] : s.selector) {
    if (!IsLabelKey(k)) {
      errors.push_back({absl::StrCat("spec.selector[", Clip(k), "]"), "is not a valid label key"});
    } else if (!IsLabelValue(v)) {
      errors.push_back({absl::StrCat("spec.selector[", Clip(k), "]"),
                        absl::StrCat("\"", Clip(v), "\" is not a valid label value")});
    }
  }
  return errors;
}

std::string JoinFieldErrors(const std::vector<FieldError>& errors) {
  // A condition message is for a person: a few thousand characters, not every bad selector key.
  constexpr size_t kMaxLength = 4096;
  std::string out;
  for (size_t i = 0; i < errors.size(); ++i) {
    std::string next = absl::StrCat(i == 0 ? "" : "; ", errors[i].field, ": ", errors[i].message);
    if (i > 0 && out.size() + next.size() > kMaxLength) {
      absl::StrAppend(&out, "; and ", errors.size() - i, " more");
      break;
    }
    out += next;
  }
  return out;
}

bool SelectorMatches(const std::map<std::string, std::string>& selector, const json& labels) {
  for (const auto& [k, v] : selector) {
    const json& got = MemberOrNull(labels, k);
    if (!got.is_string() || got.get_ref<const std::string&>() != v) return false;
  }
  return true;
}

}  // namespace neuron::op
