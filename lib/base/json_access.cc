// File: lib/base/json_access.cc
#include "lib/base/json_access.h"

#include <limits>

#include "absl/strings/match.h"

namespace neuron {

using nlohmann::json;

namespace {

const json& Null() {
  static const json kNull;
  return kNull;
}

}  // namespace

const json* Member(const json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

const json* MemberFold(const json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end()) {
    for (it = obj.begin(); it != obj.end(); ++it) {
      if (absl::EqualsIgnoreCase(it.key(), absl::string_view(key.data(), key.size()))) break;
    }
  }
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

const json* MemberAt(const json& obj, std::initializer_list<std::string_view> path) {
  const json* cur = &obj;
  for (std::string_view key : path) {
    cur = Member(*cur, key);
    if (cur == nullptr) return nullptr;
  }
  return cur->is_null() ? nullptr : cur;
}

const json* MemberAt(const json& obj, const json::json_pointer& path) {
  try {
    // contains() checks every step (objects, array bounds, index syntax); at() cannot fail then.
    if (!obj.contains(path)) return nullptr;
    const json& v = obj.at(path);
    return v.is_null() ? nullptr : &v;
  } catch (const json::exception&) {
    return nullptr;  // an array index beyond size_t
  }
}

const json& MemberOrNull(const json& obj, std::string_view key) {
  const json* v = Member(obj, key);
  return v != nullptr ? *v : Null();
}

const json& MemberOrNull(const json& obj, std::initializer_list<std::string_view> path) {
  const json* v = MemberAt(obj, path);
  return v != nullptr ? *v : Null();
}

std::string StringOf(const json& v, std::string_view def) {
  return v.is_string() ? v.get_ref<const std::string&>() : std::string(def);
}

std::string StringOf(const json* v, std::string_view def) {
  return v != nullptr ? StringOf(*v, def) : std::string(def);
}

int64_t IntOf(const json& v, int64_t def) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    return u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? static_cast<int64_t>(u)
                                                                           : def;
  }
  return v.is_number_integer() ? v.get<int64_t>() : def;
}

int64_t IntOf(const json* v, int64_t def) { return v != nullptr ? IntOf(*v, def) : def; }

bool BoolOf(const json& v, bool def) { return v.is_boolean() ? v.get<bool>() : def; }

bool BoolOf(const json* v, bool def) { return v != nullptr ? BoolOf(*v, def) : def; }

std::string StringMember(const json& obj, std::string_view key, std::string_view def) {
  return StringOf(Member(obj, key), def);
}

std::string StringAt(const json& obj, std::initializer_list<std::string_view> path,
                     std::string_view def) {
  return StringOf(MemberAt(obj, path), def);
}

int64_t IntAt(const json& obj, const json::json_pointer& path, int64_t def) {
  return IntOf(MemberAt(obj, path), def);
}

}  // namespace neuron
