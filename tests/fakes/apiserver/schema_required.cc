// File: tests/fakes/apiserver/schema_required.cc
#include "tests/fakes/apiserver/schema_required.h"

namespace neuron::fakes::apiserver {
namespace {

using nlohmann::json;

void Walk(const json& schema, const json& obj, const json* old, const std::string& path,
          std::vector<std::string>& out) {
  if (!schema.is_object()) return;
  if (old != nullptr && *old == obj) return;  // ratcheting: unchanged, not re-validated
  if (obj.is_object()) {
    const json& required = schema.value("required", json::array());
    for (const json& name : required) {
      if (name.is_string() && !obj.contains(name.get<std::string>())) {
        out.push_back((path.empty() ? "" : path + ".") + name.get<std::string>() +
                      ": Required value");
      }
    }
    const json& props = schema.value("properties", json::object());
    if (!props.is_object()) return;
    for (auto it = props.begin(); it != props.end(); ++it) {
      auto child = obj.find(it.key());
      if (child == obj.end()) continue;
      const json* was = nullptr;
      if (old != nullptr && old->is_object()) {
        auto o = old->find(it.key());
        if (o != old->end()) was = &*o;
      }
      Walk(it.value(), *child, was, (path.empty() ? "" : path + ".") + it.key(), out);
    }
  } else if (obj.is_array() && schema.contains("items")) {
    for (size_t i = 0; i < obj.size(); ++i) {
      Walk(schema["items"], obj[i], nullptr, path + "[" + std::to_string(i) + "]", out);
    }
  }
}

}  // namespace

std::vector<std::string> MissingRequired(const json& schema, const json& obj, const json* old) {
  std::vector<std::string> out;
  Walk(schema, obj, old, "", out);
  return out;
}

}  // namespace neuron::fakes::apiserver
