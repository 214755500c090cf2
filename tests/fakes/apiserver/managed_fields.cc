// File: tests/fakes/apiserver/managed_fields.cc
#include "tests/fakes/apiserver/managed_fields.h"

#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/fakes/apiserver/api_status.h"

namespace neuron::fakes::apiserver {
namespace {

using Path = std::vector<std::string>;
using PathSet = std::set<Path>;

struct Entry {
  FieldOwner owner;
  std::string time;
  PathSet paths;
};

void Leaves(const json& v, Path& cur, PathSet& out) {
  if (v.is_object()) {
    // Maps are granular: an empty map owns nothing (lists and scalars are atomic leaves).
    for (auto it = v.begin(); it != v.end(); ++it) {
      cur.push_back(it.key());
      Leaves(it.value(), cur, out);
      cur.pop_back();
    }
  } else {
    out.insert(cur);
  }
}

// The fields an object sets, scoped to the main resource or the status subresource.
PathSet LeafPaths(const json& obj, const std::string& subresource) {
  PathSet out;
  if (!obj.is_object()) return out;
  Path cur;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string& k = it.key();
    if (k == "apiVersion" || k == "kind") continue;
    if ((k == "status") != (subresource == "status")) continue;
    if (k == "metadata") {
      if (!it.value().is_object()) continue;
      for (const char* mk : {"labels", "annotations", "finalizers", "ownerReferences"}) {
        if (!it.value().contains(mk)) continue;
        cur = {"metadata", mk};
        Leaves(it.value()[mk], cur, out);
      }
      continue;
    }
    cur = {k};
    Leaves(it.value(), cur, out);
  }
  return out;
}

const json* At(const json& obj, const Path& p) {
  const json* cur = &obj;
  for (const auto& k : p) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(k);
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}

bool SameValue(const json& a, const json& b, const Path& p) {
  const json* x = At(a, p);
  const json* y = At(b, p);
  if (x == nullptr || y == nullptr) return x == y;
  return *x == *y;
}

bool Overlap(const Path& a, const Path& b) {
  const size_t n = std::min(a.size(), b.size());
  return std::equal(a.begin(), a.begin() + static_cast<long>(n), b.begin());
}

void Erase(json& obj, const Path& p) {
  json* cur = &obj;
  for (size_t i = 0; i + 1 < p.size(); ++i) {
    if (!cur->is_object() || !cur->contains(p[i])) return;
    cur = &(*cur)[p[i]];
  }
  if (cur->is_object() && !p.empty()) cur->erase(p.back());
}

void FromFieldsV1(const json& f, Path& cur, PathSet& out) {
  bool leaf = !f.is_object() || f.empty();
  if (!leaf) {
    for (auto it = f.begin(); it != f.end(); ++it) {
      if (it.key().rfind("f:", 0) != 0) {
        leaf = true;  // "k:"/"v:"/"i:"/"." entries: we own the parent atomically
        continue;
      }
      cur.push_back(it.key().substr(2));
      FromFieldsV1(it.value(), cur, out);
      cur.pop_back();
    }
  }
  if (leaf && !cur.empty()) out.insert(cur);
}

json ToFieldsV1(const PathSet& paths) {
  json f = json::object();
  for (const Path& p : paths) {
    json* cur = &f;
    for (const auto& k : p) cur = &(*cur)["f:" + k];
    if (cur->is_null()) *cur = json::object();
  }
  return f;
}

std::vector<Entry> ParseEntries(const json& obj) {
  std::vector<Entry> out;
  const json mf = obj.is_object() ? obj.value("/metadata/managedFields"_json_pointer, json::array())
                                  : json::array();
  if (!mf.is_array()) return out;
  for (const json& e : mf) {
    if (!e.is_object()) continue;
    Entry en;
    en.owner = {e.value("manager", ""), e.value("operation", "Update"), e.value("subresource", ""),
                e.value("apiVersion", "")};
    en.time = e.value("time", "");
    Path cur;
    FromFieldsV1(e.value("fieldsV1", json::object()), cur, en.paths);
    out.push_back(std::move(en));
  }
  return out;
}

void WriteEntries(json& obj, const std::vector<Entry>& entries) {
  json mf = json::array();
  for (const Entry& e : entries) {
    if (e.paths.empty()) continue;
    json j = {{"manager", e.owner.manager},        {"operation", e.owner.operation},
              {"apiVersion", e.owner.api_version}, {"time", e.time},
              {"fieldsType", "FieldsV1"},          {"fieldsV1", ToFieldsV1(e.paths)}};
    if (!e.owner.subresource.empty()) j["subresource"] = e.owner.subresource;
    mf.push_back(j);
  }
  if (mf.empty()) {
    obj["metadata"].erase("managedFields");
  } else {
    obj["metadata"]["managedFields"] = mf;
  }
}

Entry& FindOrAdd(std::vector<Entry>& entries, const FieldOwner& who) {
  for (Entry& e : entries) {
    if (e.owner.manager == who.manager && e.owner.operation == who.operation &&
        e.owner.subresource == who.subresource) {
      e.owner.api_version = who.api_version;
      e.time = NowRfc3339();
      return e;
    }
  }
  entries.push_back(Entry{who, NowRfc3339(), {}});
  return entries.back();
}

std::string Dotted(const Path& p) { return "." + absl::StrJoin(p, "."); }

json MergeApplied(json target, const json& applied) {
  if (!applied.is_object() || !target.is_object()) return applied;
  for (auto it = applied.begin(); it != applied.end(); ++it) {
    target[it.key()] =
        MergeApplied(target.contains(it.key()) ? target[it.key()] : json(nullptr), it.value());
  }
  return target;
}

}  // namespace

void TrackUpdate(const json& old_obj, json& new_obj, const FieldOwner& who) {
  std::vector<Entry> entries = ParseEntries(old_obj);
  const PathSet now = LeafPaths(new_obj, who.subresource);
  PathSet changed;
  for (const Path& p : now) {
    if (old_obj.is_null() || !SameValue(old_obj, new_obj, p)) changed.insert(p);
  }
  for (const Path& p : LeafPaths(old_obj, who.subresource)) {
    if (At(new_obj, p) == nullptr) changed.insert(p);
  }
  if (changed.empty() && !old_obj.is_null()) {
    WriteEntries(new_obj, entries);
    return;
  }
  for (Entry& e : entries) {
    std::erase_if(e.paths, [&](const Path& q) {
      if (At(new_obj, q) == nullptr) return true;
      for (const Path& p : changed) {
        if (Overlap(p, q)) return true;
      }
      return false;
    });
  }
  Entry& mine = FindOrAdd(entries, who);
  for (const Path& p : changed) {
    if (At(new_obj, p) != nullptr) mine.paths.insert(p);
  }
  WriteEntries(new_obj, entries);
}

json ServerSideApply(const json& live, const json& applied_in, const FieldOwner& who, bool force,
                     const std::string& group, const std::string& resource,
                     const std::string& name) {
  json applied = applied_in;
  if (applied.contains("metadata") && applied["metadata"].is_object()) {
    applied["metadata"].erase("managedFields");
  }
  std::vector<Entry> entries = ParseEntries(live);
  const PathSet want = LeafPaths(applied, who.subresource);
  json causes = json::array();
  std::vector<std::string> texts;
  for (Entry& e : entries) {
    if (e.owner.manager == who.manager) continue;
    for (auto qi = e.paths.begin(); qi != e.paths.end();) {
      bool conflict = false;
      for (const Path& p : want) {
        if (!Overlap(p, *qi)) continue;
        const Path& longer = p.size() >= qi->size() ? p : *qi;
        if (!SameValue(live, applied, longer)) conflict = true;
      }
      if (conflict && force) {
        qi = e.paths.erase(qi);
        continue;
      }
      if (conflict) {
        const std::string msg =
            absl::StrCat("conflict with \"", e.owner.manager, "\"",
                         e.owner.operation == "Apply" ? "" : " using " + e.owner.api_version);
        causes.push_back(
            {{"type", "FieldManagerConflict"}, {"message", msg}, {"field", Dotted(*qi)}});
        texts.push_back(absl::StrCat(msg, ": ", Dotted(*qi)));
      }
      ++qi;
    }
  }
  if (!causes.empty()) {
    ApiError err = Conflict(group, resource, name, "");
    err.message = absl::StrCat("Apply failed with ", causes.size(), " conflict",
                               causes.size() == 1 ? "" : "s", ": ", absl::StrJoin(texts, "\n"));
    err.details["causes"] = causes;
    throw err;
  }
  json result = live;
  Entry& mine = FindOrAdd(entries, who);
  for (const Path& p : mine.paths) {
    if (want.count(p) != 0) continue;
    bool shared = false;
    for (const Entry& e : entries) {
      if (&e == &mine) continue;
      for (const Path& q : e.paths) shared = shared || Overlap(p, q);
    }
    if (!shared) Erase(result, p);
  }
  result = MergeApplied(result, applied);
  mine.paths = want;
  WriteEntries(result, entries);
  return result;
}

}  // namespace neuron::fakes::apiserver
