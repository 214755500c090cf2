// File: lib/base/json_prune.cc
#include "lib/base/json_prune.h"

#include "absl/strings/str_cat.h"
#include "lib/base/json_ondemand.h"

namespace neuron {
namespace {

namespace od = simdjson::ondemand;
using nlohmann::json;
using simdjson::error_code;

template <class V>
error_code ReadPrunedObject(V& v, const JsonKeep& keep, int depth_left, json* out);

// `v` (a value or a document's root) pruned to `keep`. What is not kept is never touched:
// On-Demand passes over it when the object moves to its next member.
template <class V>
error_code ReadPruned(V& v, const JsonKeep& keep, int depth_left, json* out) {
  if (keep.Whole()) return ReadJsonTree(v, depth_left, out);
  od::json_type type;
  if (error_code e = v.type().get(type)) return e;
  if (type == od::json_type::array && keep.items) {
    if (depth_left <= 0) return simdjson::DEPTH_ERROR;
    od::array array;
    if (error_code e = v.get_array().get(array)) return e;
    *out = json::array();
    for (auto item : array) {
      od::value element;
      if (error_code e = item.get(element)) return e;
      if (error_code e = ReadPruned(element, *keep.items, depth_left - 1, &out->emplace_back())) {
        return e;
      }
    }
    return simdjson::SUCCESS;
  }
  // A type the keep does not describe is kept whole, so the reader sees what was sent.
  if (type != od::json_type::object || keep.members.empty()) {
    return ReadJsonTree(v, depth_left, out);
  }
  return ReadPrunedObject(v, keep, depth_left, out);
}

template <class V>
error_code ReadPrunedObject(V& v, const JsonKeep& keep, int depth_left, json* out) {
  if (depth_left <= 0) return simdjson::DEPTH_ERROR;
  od::object object;
  if (error_code e = v.get_object().get(object)) return e;
  *out = json::object();
  for (auto field : object) {
    std::string_view key;
    if (error_code e = field.unescaped_key().get(key)) return e;
    const JsonKeep* k = keep.Find(key);
    if (k == nullptr) continue;
    od::value member;
    if (error_code e = field.value().get(member)) return e;
    json& slot = (*out)[std::string(key)];  // a repeated key: the last one wins, as in a tree
    if (error_code e = ReadPruned(member, *k, depth_left - 1, &slot)) return e;
  }
  return simdjson::SUCCESS;
}

}  // namespace

JsonKeep::Member::Member(std::string n, JsonKeep k)
    : name(std::move(n)), keep(std::make_shared<const JsonKeep>(std::move(k))) {}

JsonKeep::Member JsonKeep::Member::Drop(std::string n) {
  Member m(std::move(n));
  m.keep = nullptr;
  return m;
}

JsonKeep::Member JsonKeep::Member::Prefix(std::string prefix, JsonKeep k) {
  Member m(std::move(prefix), std::move(k));
  m.prefix = true;
  return m;
}

bool JsonKeep::Whole() const { return members.empty() && !items; }

const JsonKeep* JsonKeep::Find(std::string_view name) const {
  static const JsonKeep kWhole;
  for (const Member& m : members) {  // a handful per level: a scan beats a tree
    if (m.prefix ? name.substr(0, m.name.size()) == m.name : name == m.name) return m.keep.get();
  }
  return others ? &kWhole : nullptr;
}

JsonKeep JsonKeep::Of(std::vector<Member> m) {
  JsonKeep k;
  k.members = std::move(m);
  return k;
}

JsonKeep JsonKeep::AllBut(std::vector<Member> m) {
  JsonKeep k;
  k.members = std::move(m);
  k.others = true;
  return k;
}

JsonKeep JsonKeep::EachItem(JsonKeep item) {
  JsonKeep k;
  k.items = std::make_shared<const JsonKeep>(std::move(item));
  return k;
}

error_code ReadPrunedJson(od::value v, const JsonKeep& keep, int max_depth, json* out) {
  return ReadPruned(v, keep, max_depth, out);
}

absl::StatusOr<json> ParsePruned(std::string_view text, const JsonKeep& keep, int max_depth) {
  const JsonInput in(text);
  JsonParser parser;
  od::document doc;
  json out;
  error_code e = parser.Iterate(in).get(doc);
  if (!e) e = ReadPruned(doc, keep, max_depth, &out);
  if (!e) e = ExpectEnd(doc);
  if (e == simdjson::DEPTH_ERROR) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid JSON: nested deeper than ", max_depth, " levels"));
  }
  if (e) return JsonErrorAt("invalid JSON", e, doc, in);
  return out;
}

}  // namespace neuron
