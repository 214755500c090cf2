// File: lib/extender/wire.cc
#include "lib/extender/wire.h"

#include <cctype>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/base/json_escape.h"

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
