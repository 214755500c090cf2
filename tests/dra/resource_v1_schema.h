// File: tests/dra/resource_v1_schema.h
// The field names of resource.k8s.io/v1 DeviceClass and ResourceClaimTemplate, as the json tags
// of staging/src/k8s.io/api/resource/v1/types.go (Kubernetes 1.34) spell them, and a check that
// a YAML document uses no other. Enough to catch v1beta1 spellings (deviceClassName beside the
// request's name instead of under "exactly") and typos; not a full validation.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <vector>

namespace neuron::dra::testing {

enum class Shape { kScalar, kObject, kList, kAnyMap, kAny };

struct Field {
  Shape shape;
  const char* type = nullptr;  // kObject: its type; kList: the element type (nullptr = scalars)
};

inline const std::map<std::string, std::map<std::string, Field>>& V1Types() {
  static const auto* types = new std::map<std::string, std::map<std::string, Field>>{
      {"DeviceClass",
       {{"apiVersion", {Shape::kScalar}},
        {"kind", {Shape::kScalar}},
        {"metadata", {Shape::kAnyMap}},
        {"spec", {Shape::kObject, "DeviceClassSpec"}}}},
      {"DeviceClassSpec",
       {{"selectors", {Shape::kList, "DeviceSelector"}},
        {"config", {Shape::kList, "DeviceClassConfiguration"}},
        {"extendedResourceName", {Shape::kScalar}}}},
      {"DeviceSelector", {{"cel", {Shape::kObject, "CELDeviceSelector"}}}},
      {"CELDeviceSelector", {{"expression", {Shape::kScalar}}}},
      {"DeviceClassConfiguration", {{"opaque", {Shape::kObject, "OpaqueDeviceConfiguration"}}}},
      {"OpaqueDeviceConfiguration",
       {{"driver", {Shape::kScalar}}, {"parameters", {Shape::kAnyMap}}}},
      {"ResourceClaimTemplate",
       {{"apiVersion", {Shape::kScalar}},
        {"kind", {Shape::kScalar}},
        {"metadata", {Shape::kAnyMap}},
        {"spec", {Shape::kObject, "ResourceClaimTemplateSpec"}}}},
      {"ResourceClaimTemplateSpec",
       {{"metadata", {Shape::kAnyMap}}, {"spec", {Shape::kObject, "ResourceClaimSpec"}}}},
      {"ResourceClaimSpec", {{"devices", {Shape::kObject, "DeviceClaim"}}}},
      {"DeviceClaim",
       {{"requests", {Shape::kList, "DeviceRequest"}},
        {"constraints", {Shape::kList, "DeviceConstraint"}},
        {"config", {Shape::kList, "DeviceClaimConfiguration"}}}},
      {"DeviceRequest",
       {{"name", {Shape::kScalar}},
        {"exactly", {Shape::kObject, "ExactDeviceRequest"}},
        {"firstAvailable", {Shape::kList, "DeviceSubRequest"}}}},
      {"ExactDeviceRequest",
       {{"deviceClassName", {Shape::kScalar}},
        {"selectors", {Shape::kList, "DeviceSelector"}},
        {"allocationMode", {Shape::kScalar}},
        {"count", {Shape::kScalar}},
        {"adminAccess", {Shape::kScalar}},
        {"tolerations", {Shape::kAny}},
        {"capacity", {Shape::kAnyMap}}}},
      {"DeviceSubRequest",
       {{"name", {Shape::kScalar}},
        {"deviceClassName", {Shape::kScalar}},
        {"selectors", {Shape::kList, "DeviceSelector"}},
        {"allocationMode", {Shape::kScalar}},
        {"count", {Shape::kScalar}},
        {"tolerations", {Shape::kAny}},
        {"capacity", {Shape::kAnyMap}}}},
      {"DeviceConstraint",
       {{"requests", {Shape::kList}},
        {"matchAttribute", {Shape::kScalar}},
        {"distinctAttribute", {Shape::kScalar}}}},
      {"DeviceClaimConfiguration",
       {{"requests", {Shape::kList}}, {"opaque", {Shape::kObject, "OpaqueDeviceConfiguration"}}}},
  };
  return *types;
}

// Appends "<path>: <problem>" for every field `node` (read as `type`) has that v1 does not, and
// for values of the wrong shape.
inline void CheckV1Fields(const YAML::Node& node, const std::string& type, const std::string& path,
                          std::vector<std::string>& errors) {
  auto t = V1Types().find(type);
  if (t == V1Types().end()) {
    errors.push_back(path + ": no such type " + type);
    return;
  }
  if (!node.IsMap()) {
    errors.push_back(path + ": not a map (" + type + ")");
    return;
  }
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>("");
    const std::string at = path.empty() ? key : path + "." + key;
    auto f = t->second.find(key);
    if (f == t->second.end()) {
      errors.push_back(at + ": unknown field of " + type);
      continue;
    }
    const YAML::Node& value = kv.second;
    switch (f->second.shape) {
      case Shape::kScalar:
        if (!value.IsScalar()) errors.push_back(at + ": not a scalar");
        break;
      case Shape::kAnyMap:
        if (!value.IsMap()) errors.push_back(at + ": not a map");
        break;
      case Shape::kObject:
        CheckV1Fields(value, f->second.type, at, errors);
        break;
      case Shape::kList:
        if (!value.IsSequence()) {
          errors.push_back(at + ": not a list");
          break;
        }
        for (size_t i = 0; i < value.size(); ++i) {
          const std::string item = at + "[" + std::to_string(i) + "]";
          if (f->second.type != nullptr) {
            CheckV1Fields(value[i], f->second.type, item, errors);
          } else if (!value[i].IsScalar()) {
            errors.push_back(item + ": not a scalar");
          }
        }
        break;
      case Shape::kAny:
        break;
    }
  }
}

}  // namespace neuron::dra::testing
