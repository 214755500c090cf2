// File: lib/operator/device_config.cc
#include "lib/operator/device_config.h"

#include <algorithm>
#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/k8s/k8s_time.h"

namespace neuron::op {
namespace {

using nlohmann::json;

// Reads spec.<key> as a string; a wrong type is remembered as a problem, never thrown.
void ReadString(const json& spec, const char* key, std::string& out,
                std::vector<FieldError>& problems) {
  auto it = spec.find(key);
  if (it == spec.end() || it->is_null()) return;
  if (!it->is_string()) {
    problems.push_back({absl::StrCat("spec.", key), "must be a string"});
    return;
  }
  out = it->get<std::string>();
}

bool ValidImage(const std::string& image) {
  return !image.empty() && std::none_of(image.begin(), image.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  });
}

// Label keys: [prefix/]name, prefix a DNS-1123 subdomain (<= 253), name <= 63 alphanumerics
// with - _ . inside. Values: empty, or a name.
bool ValidLabelName(const std::string& s) {
  static const std::regex kName("([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?");
  return s.size() <= 63 && std::regex_match(s, kName);
}

bool ValidLabelKey(const std::string& key) {
  static const std::regex kSubdomain(
      "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  const size_t slash = key.find('/');
  const std::string name = slash == std::string::npos ? key : key.substr(slash + 1);
  if (name.empty() || !ValidLabelName(name)) return false;
  if (slash == std::string::npos) return true;
  const std::string prefix = key.substr(0, slash);
  return !prefix.empty() && prefix.size() <= 253 && std::regex_match(prefix, kSubdomain);
}

}  // namespace

bool DeviceConfig::HasFinalizer() const {
  return std::find(finalizers.begin(), finalizers.end(), kFinalizer) != finalizers.end();
}

absl::StatusOr<DeviceConfig> ParseDeviceConfig(const json& obj) {
  if (!obj.is_object()) return absl::InvalidArgumentError("a DeviceConfig must be an object");
  const json meta = obj.value("metadata", json::object());
  if (!meta.is_object() || !meta.contains("name") || !meta["name"].is_string() ||
      meta["name"].get<std::string>().empty()) {
    return absl::InvalidArgumentError("a DeviceConfig needs metadata.name");
  }
  DeviceConfig dc;
  dc.api_version =
      obj.value("apiVersion", json()).is_string() ? obj["apiVersion"].get<std::string>() : "";
  auto str = [&](const char* key) {
    auto it = meta.find(key);
    return it != meta.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  dc.name = str("name");
  dc.ns = str("namespace");
  dc.uid = str("uid");
  dc.resource_version = str("resourceVersion");
  if (auto g = meta.find("generation"); g != meta.end() && g->is_number_integer()) {
    dc.generation = g->get<int64_t>();
  }
  dc.deleting = meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null();
  if (auto f = meta.find("finalizers"); f != meta.end() && f->is_array()) {
    for (const json& s : *f) {
      if (s.is_string()) dc.finalizers.push_back(s.get<std::string>());
    }
  }
  if (auto t = k8s::ParseTime(str("creationTimestamp")); t.ok()) dc.creation_time = *t;

  const json spec = obj.value("spec", json::object());
  std::vector<FieldError>& problems = dc.parse_problems;
  if (!spec.is_object()) {
    problems.push_back({"spec", "must be an object"});
    return dc;
  }
  DeviceConfigSpec& s = dc.spec;
  ReadString(spec, "driversImage", s.drivers_image, problems);
  ReadString(spec, "driverVersion", s.driver_version, problems);
  ReadString(spec, "devicePluginImage", s.device_plugin_image, problems);
  ReadString(spec, "customSchedulerImage", s.custom_scheduler_image, problems);
  ReadString(spec, "schedulerExtensionImage", s.scheduler_extension_image, problems);
  ReadString(spec, "draDriverImage", s.dra_driver_image, problems);
  ReadString(spec, "nodeMetricsImage", s.node_metrics_image, problems);
  ReadString(spec, "nodeAgentImage", s.node_agent_image, problems);
  std::string mode = "kmm";
  ReadString(spec, "driverMode", mode, problems);
  if (mode == "kmm") {
    s.driver_mode = DriverMode::kKmm;
  } else if (mode == "preinstalled") {
    s.driver_mode = DriverMode::kPreinstalled;
  } else {
    problems.push_back(
        {"spec.driverMode", absl::StrCat("unknown mode \"", mode, "\": use kmm or preinstalled")});
  }
  if (auto it = spec.find("useInTreeDrivers"); it != spec.end() && !it->is_null()) {
    if (it->is_boolean()) {
      s.use_in_tree_drivers = it->get<bool>();
    } else {
      problems.push_back({"spec.useInTreeDrivers", "must be true or false"});
    }
  }
  if (auto it = spec.find("imageRepoSecret"); it != spec.end() && !it->is_null()) {
    if (it->is_object() && it->value("name", json()).is_string()) {
      s.image_repo_secret = (*it)["name"].get<std::string>();
    } else if (!it->is_object()) {
      problems.push_back({"spec.imageRepoSecret", "must be an object {name: <secret>}"});
    }
  }
  if (auto it = spec.find("selector"); it != spec.end() && !it->is_null()) {
    if (!it->is_object()) {
      problems.push_back({"spec.selector", "must be a map of label keys to values"});
    } else {
      for (auto kv = it->begin(); kv != it->end(); ++kv) {
        if (!kv.value().is_string()) {
          problems.push_back({absl::StrCat("spec.selector[", kv.key(), "]"),
                              "label values are strings (quote true, 1, ...)"});
          continue;
        }
        s.selector[kv.key()] = kv.value().get<std::string>();
      }
    }
  }
  return dc;
}

std::vector<FieldError> ValidateDeviceConfig(const DeviceConfig& dc) {
  std::vector<FieldError> errors = dc.parse_problems;
  const DeviceConfigSpec& s = dc.spec;
  auto image = [&](const std::string& value, const char* field, bool required) {
    if (value.empty()) {
      if (required) errors.push_back({absl::StrCat("spec.", field), "is required"});
    } else if (!ValidImage(value)) {
      errors.push_back({absl::StrCat("spec.", field), "is not an image reference"});
    }
  };
  const bool kmm = s.driver_mode == DriverMode::kKmm;
  const bool dra = !s.dra_driver_image.empty();
  const bool v1alpha1 = dc.api_version == absl::StrCat(kGroup, "/v1alpha1");
  // The driver image is needed to load the module through KMM: this operator does not build it
  // in-cluster (the seed's Dockerfile ConfigMap build is OpenShift's image registry only).
  image(s.drivers_image, "driversImage", kmm);
  // v1alpha1 (the seed's README): the four images are required. v1beta1: the CEL rules below.
  image(s.device_plugin_image, "devicePluginImage", v1alpha1 || !dra);
  image(s.custom_scheduler_image, "customSchedulerImage", v1alpha1);
  image(s.scheduler_extension_image, "schedulerExtensionImage", v1alpha1);
  image(s.dra_driver_image, "draDriverImage", false);
  image(s.node_metrics_image, "nodeMetricsImage", false);
  image(s.node_agent_image, "nodeAgentImage", false);
  const int trio = !s.device_plugin_image.empty() + !s.custom_scheduler_image.empty() +
                   !s.scheduler_extension_image.empty();
  if (dra && trio > 0) {
    errors.push_back({"spec.draDriverImage",
                      "cannot be set together with devicePluginImage, customSchedulerImage or "
                      "schedulerExtensionImage (DRA replaces the device plugin and scheduler)"});
  }
  if (trio != 0 && trio != 3) {
    errors.push_back({"spec.devicePluginImage",
                      "devicePluginImage, customSchedulerImage and schedulerExtensionImage are "
                      "set together or not at all"});
  }
  for (const auto& [k, v] : s.selector) {
    if (!ValidLabelKey(k)) {
      errors.push_back({absl::StrCat("spec.selector[", k, "]"), "is not a valid label key"});
    } else if (!ValidLabelName(v)) {
      errors.push_back({absl::StrCat("spec.selector[", k, "]"),
                        absl::StrCat("\"", v, "\" is not a valid label value")});
    }
  }
  if (!ValidLabelName(s.driver_version) || s.driver_version.size() > 63) {
    errors.push_back(
        {"spec.driverVersion", "must be usable as a label value (KMM labels nodes with it)"});
  }
  return errors;
}

std::string JoinFieldErrors(const std::vector<FieldError>& errors) {
  std::vector<std::string> parts;
  for (const FieldError& e : errors) parts.push_back(absl::StrCat(e.field, ": ", e.message));
  return absl::StrJoin(parts, "; ");
}

bool SelectorMatches(const std::map<std::string, std::string>& selector, const json& labels) {
  for (const auto& [k, v] : selector) {
    if (!labels.is_object()) return false;
    auto it = labels.find(k);
    if (it == labels.end() || !it->is_string() || it->get<std::string>() != v) return false;
  }
  return true;
}

}  // namespace neuron::op
