// File: lib/base/json_access.h
// Null-safe reads of nlohmann::json trees of any shape (API objects, manifests, requests): a
// missing key, a JSON null, a non-object where an object was expected and a value of the wrong
// type all read as absent or as the caller's default. Nothing here inserts or throws.
//
// Use these instead of operator[] on a const json: that is undefined behaviour when the key is
// missing (scripts/check_const_json_index.py, run by `make lint`, finds it), and instead of
// json::value(), which throws on a non-object or a value of the wrong type.
//
//   if (const json* md = Member(pod, "metadata")) ...              // pointer: absent -> nullptr
//   const json& labels = MemberOrNull(*md, "labels");               // reference: absent -> null
//   std::string ns = StringOf(MemberAt(pod, {"metadata", "namespace"}));
//   int64_t replicas = IntAt(deploy, "/spec/replicas"_json_pointer, 1);
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "nlohmann/json.hpp"

namespace neuron {

// obj[key] when obj is an object holding `key` with a non-null value; else nullptr.
const nlohmann::json* Member(const nlohmann::json& obj, std::string_view key);

// Member() with keys matched as Go's encoding/json matches struct fields (kube-scheduler's
// requests): the exact key first, else the first key equal to it ignoring ASCII case.
const nlohmann::json* MemberFold(const nlohmann::json& obj, std::string_view key);

// obj[k0][k1]...: the value at the end of a path of object keys, when every step is an object
// holding the next key and the value is not null; else nullptr.
const nlohmann::json* MemberAt(const nlohmann::json& obj,
                               std::initializer_list<std::string_view> path);
// The same along a JSON pointer (RFC 6901; array indices allowed).
const nlohmann::json* MemberAt(const nlohmann::json& obj, const nlohmann::json::json_pointer& path);

// Reference forms: the value, or a static null when Member()/MemberAt() would be nullptr. For
// `is_*()` tests, range-for over a member that may be missing, and chained lookups.
const nlohmann::json& MemberOrNull(const nlohmann::json& obj, std::string_view key);
const nlohmann::json& MemberOrNull(const nlohmann::json& obj,
                                   std::initializer_list<std::string_view> path);

// Typed values: `v`'s value when it has the type, else `def`. A null pointer reads as absent.
std::string StringOf(const nlohmann::json& v, std::string_view def = "");
std::string StringOf(const nlohmann::json* v, std::string_view def = "");
// Integers only (no fractions, no strings); one that does not fit int64 reads as `def`.
int64_t IntOf(const nlohmann::json& v, int64_t def = 0);
int64_t IntOf(const nlohmann::json* v, int64_t def = 0);
bool BoolOf(const nlohmann::json& v, bool def = false);
bool BoolOf(const nlohmann::json* v, bool def = false);

// Shorthands for the common reads.
std::string StringMember(const nlohmann::json& obj, std::string_view key,
                         std::string_view def = "");
std::string StringAt(const nlohmann::json& obj, std::initializer_list<std::string_view> path,
                     std::string_view def = "");
int64_t IntAt(const nlohmann::json& obj, const nlohmann::json::json_pointer& path, int64_t def = 0);

}  // namespace neuron
