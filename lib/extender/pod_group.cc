// File: lib/extender/pod_group.cc
// Reads a pod's UltraServer group from its labels and annotations (pod_group.h).
#include "lib/extender/pod_group.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"

namespace neuron::extender {
namespace {

using nlohmann::json;

inline constexpr char kServerIdLabelPrefix[] = "neuron.amazonaws.com/ultraserver-server-id-";

// The string value of `key` in `obj` if `obj` is an object holding a string there.
std::optional<std::string> StringIn(const json* obj, const char* key) {
  if (obj == nullptr || !obj->is_object()) {
    return std::nullopt;
  }
  const json* v = Member(*obj, key);
  if (v == nullptr || !v->is_string()) {
    return std::nullopt;
  }
  return v->get<std::string>();
}

// "1", "2" or "4" -> N; 0 otherwise.
int SetSizeOf(const std::string& s) {
  if (s == "1" || s == "2" || s == "4") {
    return s[0] - '0';
  }
  return 0;
}

std::string Shown(const std::string& s) { return s.substr(0, 64); }

PodGroup Bad(std::string key, std::string error) {
  return PodGroup{std::move(key), 0, std::move(error)};
}

// N from ultraserver-nodes (label first, then annotation): 0 when absent, -1 when malformed.
int DeclaredSize(const json* labels, const json* annotations, std::string& raw) {
  std::optional<std::string> v = StringIn(labels, kUltraServerNodesKey);
  if (!v) {
    v = StringIn(annotations, kUltraServerNodesKey);
  }
  if (!v) {
    return 0;
  }
  raw = *v;
  const int n = SetSizeOf(*v);
  return n > 0 ? n : -1;
}

std::optional<PodGroup> LwsGroup(const std::string& ns, const std::string& group_key,
                                 const json* annotations, int declared) {
  PodGroup g{absl::StrCat(ns, "/lws:", group_key), 0, ""};
  const std::string topo = StringIn(annotations, kLwsExclusiveAnnotation).value_or("");
  int n = declared;
  if (absl::StartsWith(topo, kServerIdLabelPrefix)) {
    const int from_topo = SetSizeOf(topo.substr(sizeof(kServerIdLabelPrefix) - 1));
    if (from_topo == 0) {
      return Bad(g.key, absl::StrCat(kLwsExclusiveAnnotation, " \"", Shown(topo),
                                     "\" names no UltraServer set size (1, 2 or 4)"));
    }
    if (declared > 0 && declared != from_topo) {
      return Bad(g.key, absl::StrCat(kUltraServerNodesKey, " ", declared, " disagrees with ",
                                     kLwsExclusiveAnnotation, " ", Shown(topo)));
    }
    n = from_topo;
  }
  if (n == 0) {
    return std::nullopt;  // an LWS that does not ask for an UltraServer set
  }
  const std::string size = StringIn(annotations, kLwsSizeAnnotation).value_or("");
  if (size != std::to_string(n)) {
    return Bad(g.key,
               absl::StrCat("LeaderWorkerSet group size ", kLwsSizeAnnotation, "=\"", Shown(size),
                            "\" must equal the UltraServer set size ", n, " (one pod per node)"));
  }
  g.set_size = n;
  return g;
}

}  // namespace

std::optional<PodGroup> ParsePodGroup(const std::string& ns, const json* labels,
                                      const json* annotations) {
  std::string raw;
  const int declared = DeclaredSize(labels, annotations, raw);
  if (std::optional<std::string> name = StringIn(labels, kPodGroupLabel)) {
    PodGroup g{absl::StrCat(ns, "/", *name), declared, ""};
    if (name->empty()) {
      return Bad(g.key, absl::StrCat("label ", kPodGroupLabel, " is empty"));
    }
    if (declared == 0) {
      return Bad(g.key, absl::StrCat("pod group ", g.key, " has no ", kUltraServerNodesKey,
                                     " label or annotation (1, 2 or 4)"));
    }
    if (declared < 0) {
      return Bad(g.key, absl::StrCat(kUltraServerNodesKey, " \"", Shown(raw),
                                     "\" is not an UltraServer set size (1, 2 or 4)"));
    }
    return g;
  }
  std::optional<std::string> lws = StringIn(labels, kLwsGroupKeyLabel);
  if (declared < 0) {
    return Bad(absl::StrCat(ns, "/lws:", lws.value_or("")),
               absl::StrCat(kUltraServerNodesKey, " \"", Shown(raw),
                            "\" is not an UltraServer set size (1, 2 or 4)"));
  }
  if (lws && !lws->empty()) {
    return LwsGroup(ns, *lws, annotations, declared);
  }
  if (declared > 0) {
    return Bad("",
               absl::StrCat(kUltraServerNodesKey, " is set but the pod names no group (label ",
                            kPodGroupLabel, " or a LeaderWorkerSet's ", kLwsGroupKeyLabel, ")"));
  }
  return std::nullopt;
}

}  // namespace neuron::extender
