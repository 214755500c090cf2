// File: lib/extender/wire.cc
#include "lib/extender/wire.h"

#include <cctype>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace neuron::extender {
namespace {

using nlohmann::json;

absl::Status Invalid(const std::string& what) { return absl::InvalidArgumentError(what); }

// Present and not null.
const json* Field(const json& obj, std::string_view key) {
  const json* v = FindKey(obj, key);
  return v && !v->is_null() ? v : nullptr;
}

absl::StatusOr<std::string> OptString(const json& obj, const std::string& key) {
  const json* v = Field(obj, key);
  if (!v) return std::string();
  if (!v->is_string()) return Invalid(absl::StrCat(key, " must be a string"));
  return v->get<std::string>();
}

absl::StatusOr<std::vector<std::string>> StringList(const json& v, const std::string& what) {
  if (!v.is_array()) return Invalid(absl::StrCat(what, " must be an array of strings"));
  std::vector<std::string> out;
  out.reserve(v.size());
  for (const json& s : v) {
    if (!s.is_string()) return Invalid(absl::StrCat(what, " must be an array of strings"));
    out.push_back(s.get<std::string>());
  }
  return out;
}

absl::StatusOr<PodInfo> DecodePod(const json& root) {
  const json* pod = Field(root, "Pod");
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

json StringMap(const std::map<std::string, std::string>& m) {
  json out = json::object();
  for (const auto& [k, v] : m) out[k] = v;
  return out;
}

absl::StatusOr<std::map<std::string, std::string>> DecodeStringMap(const json* v,
                                                                   const std::string& what) {
  std::map<std::string, std::string> out;
  if (!v) return out;
  if (!v->is_object()) return Invalid(absl::StrCat(what, " must be an object"));
  for (const auto& [k, s] : v->items()) {
    if (!s.is_string()) return Invalid(absl::StrCat(what, " values must be strings"));
    out[k] = s.get<std::string>();
  }
  return out;
}

}  // namespace

absl::StatusOr<json> ParseJson(std::string_view body) {
  // nlohmann's parser recurses per nesting level; refuse "[[[[..." before it can blow the stack.
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

const json* FindKey(const json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it != obj.end()) return &*it;
  for (auto i = obj.begin(); i != obj.end(); ++i) {
    if (absl::EqualsIgnoreCase(i.key(), absl::string_view(key.data(), key.size()))) return &*i;
  }
  return nullptr;
}

std::vector<std::string> ExtenderArgs::CandidateNames() const {
  if (node_names) return *node_names;
  std::vector<std::string> out;
  if (nodes) {
    for (const json& n : *nodes) {
      const json* md = FindKey(n, "metadata");
      const json* name = md ? FindKey(*md, "name") : nullptr;
      out.push_back(name && name->is_string() ? name->get<std::string>() : "");
    }
  }
  return out;
}

absl::StatusOr<ExtenderArgs> DecodeExtenderArgs(std::string_view body) {
  absl::StatusOr<json> root = ParseObject(body, "ExtenderArgs");
  if (!root.ok()) return root.status();
  ExtenderArgs args;
  absl::StatusOr<PodInfo> pod = DecodePod(*root);
  if (!pod.ok()) return pod.status();
  args.pod = std::move(*pod);
  if (const json* names = Field(*root, "NodeNames")) {
    absl::StatusOr<std::vector<std::string>> list = StringList(*names, "NodeNames");
    if (!list.ok()) return list.status();
    args.node_names = std::move(*list);
  }
  if (const json* nodes = Field(*root, "Nodes")) {
    if (!nodes->is_object()) return Invalid("Nodes must be a NodeList object");
    const json* items = Field(*nodes, "items");
    args.nodes.emplace();
    if (items) {
      if (!items->is_array()) return Invalid("Nodes.items must be an array");
      args.nodes->reserve(items->size());
      // Moved out of the parsed tree (ours: `root` is a local, so dropping const is sound): a
      // full NodeList is tens of MB, and copying it doubled the cost of a call.
      for (json& n : const_cast<json&>(*items)) {
        const json* md = n.is_object() ? Field(n, "metadata") : nullptr;
        const json* name = md && md->is_object() ? Field(*md, "name") : nullptr;
        if (!name || !name->is_string()) return Invalid("Nodes.items[] needs metadata.name");
        args.nodes->push_back(std::move(n));
      }
    }
  }
  if (!args.node_names && !args.nodes) return Invalid("neither NodeNames nor Nodes is set");
  return args;
}

std::string EncodeFilterResult(const FilterResult& r) {
  json out = json::object();
  if (r.nodes) {
    json items = json::array();
    for (const json& n : *r.nodes) items.push_back(n);
    out["Nodes"] = {{"metadata", json::object()}, {"items", std::move(items)}};
  } else {
    out["Nodes"] = nullptr;
  }
  out["NodeNames"] = r.node_names ? json(*r.node_names) : json(nullptr);
  out["FailedNodes"] = StringMap(r.failed);
  out["FailedAndUnresolvableNodes"] = StringMap(r.failed_unresolvable);
  out["Error"] = r.error;
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

absl::StatusOr<FilterResult> DecodeFilterResult(std::string_view body) {
  absl::StatusOr<json> root = ParseObject(body, "ExtenderFilterResult");
  if (!root.ok()) return root.status();
  FilterResult r;
  if (const json* names = Field(*root, "NodeNames")) {
    absl::StatusOr<std::vector<std::string>> list = StringList(*names, "NodeNames");
    if (!list.ok()) return list.status();
    r.node_names = std::move(*list);
  }
  if (const json* nodes = Field(*root, "Nodes")) {
    const json* items = nodes->is_object() ? Field(*nodes, "items") : nullptr;
    r.nodes.emplace();
    if (items && items->is_array()) r.nodes->assign(items->begin(), items->end());
  }
  absl::StatusOr<std::map<std::string, std::string>> failed =
      DecodeStringMap(Field(*root, "FailedNodes"), "FailedNodes");
  if (!failed.ok()) return failed.status();
  r.failed = std::move(*failed);
  failed =
      DecodeStringMap(Field(*root, "FailedAndUnresolvableNodes"), "FailedAndUnresolvableNodes");
  if (!failed.ok()) return failed.status();
  r.failed_unresolvable = std::move(*failed);
  absl::StatusOr<std::string> err = OptString(*root, "Error");
  if (!err.ok()) return err.status();
  r.error = *err;
  return r;
}

std::string EncodeHostPriorityList(const std::vector<HostPriority>& list) {
  json out = json::array();
  for (const HostPriority& h : list) out.push_back({{"Host", h.host}, {"Score", h.score}});
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
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
    if (const json* s = Field(h, "Score")) {
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
  const bool meta = Field(*root, "NodeNameToMetaVictims") != nullptr;
  const json* map =
      meta ? Field(*root, "NodeNameToMetaVictims") : Field(*root, "NodeNameToVictims");
  if (!map) return args;
  if (!map->is_object()) return Invalid("NodeNameToVictims must be an object");
  for (const auto& [node, v] : map->items()) {
    if (!v.is_object()) return Invalid(absl::StrCat("victims of ", node, " must be an object"));
    MetaVictims mv;
    if (const json* pods = Field(v, "Pods")) {
      if (!pods->is_array()) return Invalid(absl::StrCat("victims of ", node, ": Pods not array"));
      for (const json& p : *pods) {
        const json* uid = nullptr;
        if (meta) {
          uid = p.is_object() ? Field(p, "UID") : nullptr;
        } else if (const json* md = p.is_object() ? Field(p, "metadata") : nullptr;
                   md && md->is_object()) {
          uid = Field(*md, "uid");
        }
        if (!uid || !uid->is_string()) {
          return Invalid(absl::StrCat("victim on ", node, " has no UID"));
        }
        mv.pod_uids.push_back(uid->get<std::string>());
      }
    }
    if (const json* n = Field(v, "NumPDBViolations")) {
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
