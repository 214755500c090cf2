// File: lib/base/json_contains.cc
#include "lib/base/json_contains.h"

namespace neuron {
namespace {

using nlohmann::json;

bool Empty(const json& v) { return (v.is_object() || v.is_array()) && v.empty(); }

}  // namespace

bool JsonContains(const json& live, const json& desired) {
  if (desired.is_object()) {
    if (!live.is_object()) return false;
    for (const auto& [key, value] : desired.items()) {
      auto it = live.find(key);
      if (it == live.end()) {
        if (Empty(value) || value.is_null()) continue;
        return false;
      }
      if (!JsonContains(*it, value)) return false;
    }
    return true;
  }
  if (desired.is_array()) {
    if (!live.is_array() || live.size() != desired.size()) return false;
    for (auto l = live.begin(), d = desired.begin(); d != desired.end(); ++l, ++d) {
      if (!JsonContains(*l, *d)) return false;
    }
    return true;
  }
  return desired == live;  // numbers compare by value across integer and float forms
}

}  // namespace neuron
