// File: lib/extender/wire.cc
#include "lib/extender/wire.h"

#include <cctype>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/base/json_escape.h"
#include "lib/base/json_scanner.h"

namespace neuron::extender {
namespace {

using nlohmann::json;

absl::Status Invalid(const std::string& what) { return absl::InvalidArgumentError(what); }

absl::StatusOr<std::string> OptString(const json& obj, const std::string& key) {
  const json* v = MemberFold(obj, key);
  if (!v) return std::string();
  if (!v->is_string()) return Invalid(absl::StrCat(key, " must be a string"));
  return v->get<std::string>();
}

absl::StatusOr<PodInfo> DecodePod(const json& root) {
  const json* pod = MemberFold(root, "Pod");
  if (!pod) return Invalid("Pod is missing");
  absl::StatusOr<PodInfo> p = ParsePod(*pod);
  if (!p.ok()) return Invalid(absl::StrCat("Pod: ", p.status().message()));
  return p;
}

absl::StatusOr<json> ParseObject(std::string_view body, const std::string& type) {
  absl::StatusOr<json> j = ParseJson(body);
  if (!j.ok()) return j.status();
  if (!j->is_object()) return Invalid(absl::StrCat(type, " must be a JSON object"));
  return j;
}

}  // namespace

absl::StatusOr<json> ParseJson(std::string_view body) {
  // nlohmann 3.11 parses with an explicit stack and frees a tree iteratively, but copying,
  // comparing and dumping a tree recurse per nesting level, and so do the readers of what this
  // returns: refuse "[[[[..." here so nothing downstream can blow the stack.
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : body) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        return Invalid(absl::StrCat("JSON nested deeper than ", kMaxJsonDepth, " levels"));
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  json j = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Invalid("request body is not valid JSON");
  return j;
}

std::vector<std::string_view> ExtenderArgs::CandidateNames() const {
  std::vector<std::string_view> out;
  if (node_names) {
    out.assign(node_names->begin(), node_names->end());
  } else if (nodes) {
    out.reserve(nodes->size());
    for (const RawNode& n : *nodes) out.push_back(n.name);
  }
  return out;
}

namespace {

// Go matches a JSON key to a field case-insensitively (the struct has no json tags), and a
// repeated key overwrites: the last one wins.
bool KeyIs(std::string_view key, std::string_view field) {
  return absl::EqualsIgnoreCase(absl::string_view(key.data(), key.size()),
                                absl::string_view(field.data(), field.size()));
}

absl::Status ScanError(const JsonScanner& s, const std::string& type) {
  return Invalid(absl::StrCat(type, ": ", s.error().message()));
}

// A JSON array of strings (or null: none).
bool ScanStringList(JsonScanner& s, const std::string& what,
                    std::optional<std::vector<std::string>>* out) {
  if (s.ConsumeNull()) {
    out->reset();
    return true;
  }
  JsonScanner::Type t;
  if (s.Peek(&t) && t != JsonScanner::Type::kArray) {
    return s.Fail(absl::StrCat(what, " must be an array of strings"));
  }
  out->emplace();
  if (!s.EnterArray()) return false;
  while (s.NextItem()) {
    if (s.Peek(&t) && t != JsonScanner::Type::kString) {
      return s.Fail(absl::StrCat(what, " must be an array of strings"));
    }
    if (!s.ReadString(&(*out)->emplace_back())) return false;
  }
  return s.ok();
}

// True when `part` lies inside `whole` (std::less_equal: a total order even across objects).
bool Within(std::string_view part, std::string_view whole) {
  const std::less_equal<const char*> le;
  return le(whole.data(), part.data()) &&
         le(part.data() + part.size(), whole.data() + whole.size());
}

// NodeNames: views into the body; the rare escaped name is unescaped into `unescaped`, whose
// strings never move (a deque keeps its elements in place as it grows).
bool ScanNameList(JsonScanner& s, std::string_view body, std::deque<std::string>& unescaped,
                  std::optional<std::vector<std::string_view>>* out) {
  if (s.ConsumeNull()) {
    out->reset();
    return true;
  }
  JsonScanner::Type t;
  if (s.Peek(&t) && t != JsonScanner::Type::kArray) {
    return s.Fail("NodeNames must be an array of strings");
  }
  out->emplace();
  if (!s.EnterArray()) return false;
  std::string_view name;
  while (s.NextItem()) {
    if (s.Peek(&t) && t != JsonScanner::Type::kString) {
      return s.Fail("NodeNames must be an array of strings");
    }
    if (!s.ReadStringView(&name)) return false;
    (*out)->push_back(Within(name, body) ? name : std::string_view(unescaped.emplace_back(name)));
  }
  return s.ok();
}

// A JSON object of string values (or null: empty).
bool ScanStringMap(JsonScanner& s, const std::string& what,
                   std::map<std::string, std::string>* out) {
  out->clear();
  if (s.ConsumeNull()) return true;
  JsonScanner::Type t;
  if (s.Peek(&t) && t != JsonScanner::Type::kObject) {
    return s.Fail(absl::StrCat(what, " must be an object"));
  }
  std::string_view key;
  if (!s.EnterObject()) return false;
  while (s.NextMember(&key)) {
    std::string k(key);
    if (s.Peek(&t) && t != JsonScanner::Type::kString) {
      return s.Fail(absl::StrCat(what, " values must be strings"));
    }
    if (!s.ReadString(&(*out)[k])) return false;
  }
  return s.ok();
}

// One Node item: metadata.name picked out, the exact text kept as a view into `body`.
bool ScanNodeItem(JsonScanner& s, std::string_view body, RawNode* out) {
  JsonScanner::Type t;
  if (!s.Peek(&t)) return false;
  if (t != JsonScanner::Type::kObject) return s.Fail("Nodes.items[] must be Node objects");
  const size_t begin = s.offset();
  std::string_view key;
  if (!s.EnterObject()) return false;
  while (s.NextMember(&key)) {
    if (!KeyIs(key, "metadata") || s.ConsumeNull()) {
      if (!s.Skip()) return false;
      continue;
    }
    if (!s.EnterObject()) return false;
    while (s.NextMember(&key)) {
      if (!KeyIs(key, "name")) {
        if (!s.Skip()) return false;
      } else if (!s.ConsumeNull() && !s.ReadString(&out->name)) {
        return false;
      }
    }
  }
  if (!s.ok()) return false;
  if (out->name.empty()) return s.Fail("Nodes.items[] needs metadata.name");
  out->json = body.substr(begin, s.offset() - begin);
  return true;
}

// A v1.NodeList: only its items matter (or null: no list).
bool ScanNodeList(JsonScanner& s, std::string_view body, std::optional<std::vector<RawNode>>* out) {
  if (s.ConsumeNull()) {
    out->reset();
    return true;
  }
  JsonScanner::Type t;
  if (s.Peek(&t) && t != JsonScanner::Type::kObject) {
    return s.Fail("Nodes must be a NodeList object");
  }
  out->emplace();
  std::string_view key;
  if (!s.EnterObject()) return false;
  while (s.NextMember(&key)) {
    if (!KeyIs(key, "items") || s.ConsumeNull()) {
      if (!s.Skip()) return false;
      continue;
    }
    if (s.Peek(&t) && t != JsonScanner::Type::kArray) return s.Fail("Nodes.items must be an array");
    (*out)->clear();
    if (!s.EnterArray()) return false;
    while (s.NextItem()) {
      if (!ScanNodeItem(s, body, &(*out)->emplace_back())) return false;
    }
  }
  return s.ok();
}

// The embedded Pod's semantics (effective requests) live in ParsePod: its text is cut out by
// the scanner and built only as far as ParsePod reads (PodFields). Null leaves `pod` unset.
bool ScanPod(JsonScanner& s, std::optional<std::string_view>* pod) {
  if (s.ConsumeNull()) {
    pod->reset();
    return true;
  }
  std::string_view raw;
  if (!s.Skip(&raw)) return false;
  *pod = raw;
  return true;
}

absl::StatusOr<PodInfo> DecodePodText(std::optional<std::string_view> raw, PodCache* cache) {
  if (!raw) return Invalid("Pod is missing");
  if (cache) {
    if (std::optional<PodInfo> known = cache->Find(*raw)) return std::move(*known);
  }
  absl::StatusOr<json> pod = ParsePruned(*raw, PodFields(), kMaxJsonDepth);
  if (!pod.ok()) return pod.status();
  absl::StatusOr<PodInfo> p = ParsePod(*pod);
  if (!p.ok()) return Invalid(absl::StrCat("Pod: ", p.status().message()));
  if (cache) cache->Add(*raw, *p);
  return p;
}

// Starts a scan of `body`, which must hold one JSON object.
bool EnterTopObject(JsonScanner& s, const std::string& type) {
  JsonScanner::Type t;
  if (s.Peek(&t) && t != JsonScanner::Type::kObject) {
    return s.Fail(absl::StrCat(type, " must be a JSON object"));
  }
  return s.EnterObject();
}

bool FinishTop(JsonScanner& s) {
  if (s.ok() && !s.AtEnd()) return s.Fail("unexpected data after the JSON object");
  return s.ok();
}

}  // namespace

absl::StatusOr<ExtenderArgs> DecodeExtenderArgs(std::string_view body, PodCache* pods) {
  JsonScanner s(body, kMaxJsonDepth);
  ExtenderArgs args;
  std::optional<std::string_view> pod;
  std::string_view key;
  if (EnterTopObject(s, "ExtenderArgs")) {
    while (s.NextMember(&key)) {
      if (KeyIs(key, "Pod")) {
        ScanPod(s, &pod);
      } else if (KeyIs(key, "NodeNames")) {
        ScanNameList(s, body, args.unescaped_names, &args.node_names);
      } else if (KeyIs(key, "Nodes")) {
        ScanNodeList(s, body, &args.nodes);
      } else {
        s.Skip();
      }
    }
  }
  if (!FinishTop(s)) return ScanError(s, "ExtenderArgs");
  absl::StatusOr<PodInfo> p = DecodePodText(pod, pods);
  if (!p.ok()) return p.status();
  args.pod = std::move(*p);
  if (!args.node_names && !args.nodes) return Invalid("neither NodeNames nor Nodes is set");
  return args;
}

namespace {

// Hand-written encoders: a filter or prioritize answer names hundreds of nodes, and building a
// tree first cost more than the decision.
void AppendStringMap(std::string& out, const std::map<std::string, std::string>& m) {
  out += '{';
  bool first = true;
  for (const auto& [k, v] : m) {
    if (!first) out += ',';
    first = false;
    AppendJsonString(out, k);
    out += ':';
    AppendJsonString(out, v);
  }
  out += '}';
}

}  // namespace

std::string EncodeFilterResult(const FilterResult& r) {
  size_t size = 128;
  if (r.nodes) {
    for (std::string_view n : *r.nodes) size += n.size() + 1;
  }
  if (r.node_names) {
    for (const std::string& n : *r.node_names) size += n.size() + 3;
  }
  for (const auto* m : {&r.failed, &r.failed_unresolvable}) {
    for (const auto& [k, v] : *m) size += k.size() + v.size() + 6;
  }
  std::string out;
  out.reserve(size);
  out += "{\"Nodes\":";
  if (r.nodes) {
    out += "{\"metadata\":{},\"items\":[";
    for (size_t i = 0; i < r.nodes->size(); ++i) {
      if (i) out += ',';
      out += (*r.nodes)[i];  // echoed verbatim: validated JSON from the request
    }
    out += "]}";
  } else {
    out += "null";
  }
  out += ",\"NodeNames\":";
  if (r.node_names) {
    out += '[';
    for (size_t i = 0; i < r.node_names->size(); ++i) {
      if (i) out += ',';
      AppendJsonString(out, (*r.node_names)[i]);
    }
    out += ']';
  } else {
    out += "null";
  }
  out += ",\"FailedNodes\":";
  AppendStringMap(out, r.failed);
  out += ",\"FailedAndUnresolvableNodes\":";
  AppendStringMap(out, r.failed_unresolvable);
  out += ",\"Error\":";
  AppendJsonString(out, r.error);
  out += '}';
  return out;
}

absl::StatusOr<FilterResult> DecodeFilterResult(std::string_view body) {
  JsonScanner s(body, kMaxJsonDepth);
  FilterResult r;
  std::optional<std::vector<RawNode>> nodes;
  std::string_view key;
  if (EnterTopObject(s, "ExtenderFilterResult")) {
    while (s.NextMember(&key)) {
      if (KeyIs(key, "NodeNames")) {
        ScanStringList(s, "NodeNames", &r.node_names);
      } else if (KeyIs(key, "Nodes")) {
        ScanNodeList(s, body, &nodes);
      } else if (KeyIs(key, "FailedNodes")) {
        ScanStringMap(s, "FailedNodes", &r.failed);
      } else if (KeyIs(key, "FailedAndUnresolvableNodes")) {
        ScanStringMap(s, "FailedAndUnresolvableNodes", &r.failed_unresolvable);
      } else if (KeyIs(key, "Error")) {
        if (!s.ConsumeNull() && !s.ReadString(&r.error)) s.Fail("Error must be a string");
      } else {
        s.Skip();
      }
    }
  }
  if (!FinishTop(s)) return ScanError(s, "ExtenderFilterResult");
  if (nodes) {
    r.nodes.emplace();
    for (const RawNode& n : *nodes) r.nodes->push_back(n.json);
  }
  return r;
}

namespace {

template <typename Host, typename Score>
std::string EncodeHosts(size_t n, Host host, Score score) {
  std::string out;
  out.reserve(n * 64 + 2);
  out += '[';
  for (size_t i = 0; i < n; ++i) {
    if (i) out += ',';
    out += "{\"Host\":";
    AppendJsonString(out, host(i));
    out += ",\"Score\":";
    out += std::to_string(score(i));
    out += '}';
  }
  out += ']';
  return out;
}

}  // namespace

std::string EncodeHostPriorityList(const std::vector<HostPriority>& list) {
  return EncodeHosts(
      list.size(), [&](size_t i) { return std::string_view(list[i].host); },
      [&](size_t i) { return list[i].score; });
}

std::string EncodeHostScores(const std::vector<std::string_view>& hosts,
                             const std::vector<int>& scores) {
  return EncodeHosts(
      hosts.size(), [&](size_t i) { return hosts[i]; }, [&](size_t i) { return scores[i]; });
}

absl::StatusOr<std::vector<HostPriority>> DecodeHostPriorityList(std::string_view body) {
  absl::StatusOr<json> root = ParseJson(body);
  if (!root.ok()) return root.status();
  if (root->is_null()) return std::vector<HostPriority>{};
  if (!root->is_array()) return Invalid("HostPriorityList must be an array");
  std::vector<HostPriority> out;
  for (const json& h : *root) {
    if (!h.is_object()) return Invalid("HostPriority must be an object");
    HostPriority hp;
    absl::StatusOr<std::string> host = OptString(h, "Host");
    if (!host.ok()) return host.status();
    hp.host = *host;
    if (const json* s = MemberFold(h, "Score")) {
      if (!s->is_number_integer()) return Invalid("Score must be an integer");
      if (s->is_number_unsigned() &&
          s->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Invalid("Score out of range");
      }
      hp.score = s->get<int64_t>();
    }
    out.push_back(std::move(hp));
  }
  return out;
}

absl::StatusOr<BindingArgs> DecodeBindingArgs(std::string_view body) {
  absl::StatusOr<json> root = ParseObject(body, "ExtenderBindingArgs");
  if (!root.ok()) return root.status();
  BindingArgs b;
  for (auto [key, field] : {std::pair{"PodName", &b.pod_name},
                            {"PodNamespace", &b.pod_namespace},
                            {"PodUID", &b.pod_uid},
                            {"Node", &b.node}}) {
    absl::StatusOr<std::string> v = OptString(*root, key);
    if (!v.ok()) return v.status();
    *field = std::move(*v);
  }
  if (b.pod_name.empty()) return Invalid("PodName is missing");
  if (b.node.empty()) return Invalid("Node is missing");
  if (b.pod_namespace.empty()) b.pod_namespace = "default";
  return b;
}

std::string EncodeBindingResult(const std::string& error) { return EncodeError(error); }

absl::StatusOr<PreemptionArgs> DecodePreemptionArgs(std::string_view body) {
  absl::StatusOr<json> root = ParseObject(body, "ExtenderPreemptionArgs");
  if (!root.ok()) return root.status();
  PreemptionArgs args;
  absl::StatusOr<PodInfo> pod = DecodePod(*root);
  if (!pod.ok()) return pod.status();
  args.pod = std::move(*pod);
  // Meta form (nodeCacheCapable) wins; the full form carries v1.Pods whose metadata.uid we keep.
  const bool meta = MemberFold(*root, "NodeNameToMetaVictims") != nullptr;
  const json* map =
      meta ? MemberFold(*root, "NodeNameToMetaVictims") : MemberFold(*root, "NodeNameToVictims");
  if (!map) return args;
  if (!map->is_object()) return Invalid("NodeNameToVictims must be an object");
  for (const auto& [node, v] : map->items()) {
    if (!v.is_object()) return Invalid(absl::StrCat("victims of ", node, " must be an object"));
    MetaVictims mv;
    if (const json* pods = MemberFold(v, "Pods")) {
      if (!pods->is_array()) return Invalid(absl::StrCat("victims of ", node, ": Pods not array"));
      for (const json& p : *pods) {
        const json* uid = nullptr;
        if (meta) {
          uid = p.is_object() ? MemberFold(p, "UID") : nullptr;
        } else if (const json* md = p.is_object() ? MemberFold(p, "metadata") : nullptr;
                   md && md->is_object()) {
          uid = MemberFold(*md, "uid");
        }
        if (!uid || !uid->is_string()) {
          return Invalid(absl::StrCat("victim on ", node, " has no UID"));
        }
        mv.pod_uids.push_back(uid->get<std::string>());
      }
    }
    if (const json* n = MemberFold(v, "NumPDBViolations")) {
      if (!n->is_number_integer()) return Invalid("NumPDBViolations must be an integer");
      if (n->is_number_unsigned() &&
          n->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Invalid("NumPDBViolations out of range");
      }
      mv.num_pdb_violations = n->get<int64_t>();
    }
    args.victims[node] = std::move(mv);
  }
  return args;
}

std::string EncodePreemptionResult(const std::map<std::string, MetaVictims>& victims) {
  json m = json::object();
  for (const auto& [node, v] : victims) {
    json pods = json::array();
    for (const std::string& uid : v.pod_uids) pods.push_back({{"UID", uid}});
    m[node] = {{"Pods", std::move(pods)}, {"NumPDBViolations", v.num_pdb_violations}};
  }
  json out = {{"NodeNameToMetaVictims", std::move(m)}};
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string EncodeError(const std::string& msg) {
  json out = {{"Error", msg}};
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace neuron::extender
