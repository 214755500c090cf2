// File: lib/base/json_prune.cc
#include "lib/base/json_prune.h"

#include "lib/base/json_scanner.h"

namespace neuron {
namespace {

using nlohmann::json;

// A whole value: its exact text parsed as a tree. Scalars and small kept subtrees only.
bool ReadWhole(JsonScanner& s, json* out) {
  std::string_view raw;
  if (!s.Skip(&raw)) return false;
  *out = json::parse(raw.begin(), raw.end(), nullptr, /*allow_exceptions=*/false);
  // The scanner validated `raw`; nlohmann refuses what Go accepts (numbers beyond double,
  // lone surrogates): keep the value as its text rather than lose the document.
  if (out->is_discarded()) *out = std::string(raw);
  return true;
}

const JsonKeep* KeepFor(const JsonKeep& keep, std::string_view name) {
  if (auto it = keep.members.find(name); it != keep.members.end()) return &it->second;
  for (const auto& [prefix, k] : keep.prefixes) {
    if (name.substr(0, prefix.size()) == prefix) return &k;
  }
  return nullptr;
}

bool ReadPruned(JsonScanner& s, const JsonKeep& keep, json* out) {
  JsonScanner::Type t;
  if (!s.Peek(&t)) return false;
  if (keep.Whole()) return ReadWhole(s, out);
  if (t == JsonScanner::Type::kArray && keep.items) {
    *out = json::array();
    if (!s.EnterArray()) return false;
    while (s.NextItem()) {
      if (!ReadPruned(s, *keep.items, &out->emplace_back())) return false;
    }
    return s.ok();
  }
  if (t != JsonScanner::Type::kObject || (keep.members.empty() && keep.prefixes.empty())) {
    return ReadWhole(s, out);
  }
  *out = json::object();
  std::string_view key;
  if (!s.EnterObject()) return false;
  while (s.NextMember(&key)) {
    const JsonKeep* k = KeepFor(keep, key);
    if (!k) {
      if (!s.Skip()) return false;
      continue;
    }
    json& slot = (*out)[std::string(key)];  // a repeated key: the last one wins, as in a tree
    if (!ReadPruned(s, *k, &slot)) return false;
  }
  return s.ok();
}

}  // namespace

absl::StatusOr<json> ParsePruned(std::string_view text, const JsonKeep& keep, int max_depth) {
  JsonScanner s(text, max_depth);
  json out;
  if (ReadPruned(s, keep, &out) && !s.AtEnd() && s.ok()) s.Fail("unexpected data after JSON");
  if (!s.ok()) return s.error();
  return out;
}

}  // namespace neuron
