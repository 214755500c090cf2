// File: lib/extender/json_access.h
// Null-safe reads of API objects as nlohmann::json: a missing key, a JSON null and a value of the
// wrong type all read as absent, so hostile or partial objects never throw.
#pragma once

#include <string>

#include "nlohmann/json.hpp"

namespace neuron::extender {

// obj[key] when obj is an object holding a non-null `key`; else nullptr.
inline const nlohmann::json* Member(const nlohmann::json& obj, const std::string& key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

// obj[key] when it is a string; else "".
inline std::string StringMember(const nlohmann::json& obj, const std::string& key) {
  const nlohmann::json* v = Member(obj, key);
  return v && v->is_string() ? v->get<std::string>() : "";
}

}  // namespace neuron::extender
