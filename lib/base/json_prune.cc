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
  if (t != JsonScanner::Type::kObject || keep.members.empty()) {
    return ReadWhole(s, out);
  }
  *out = json::object();
  std::string_view key;
  if (!s.EnterObject()) return false;
  while (s.NextMember(&key)) {
    const JsonKeep* k = keep.Find(key);
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

absl::StatusOr<json> ParsePruned(std::string_view text, const JsonKeep& keep, int max_depth) {
  JsonScanner s(text, max_depth);
  json out;
  if (ReadPruned(s, keep, &out) && !s.AtEnd() && s.ok()) s.Fail("unexpected data after JSON");
  if (!s.ok()) return s.error();
  return out;
}

}  // namespace neuron
