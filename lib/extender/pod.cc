// File: lib/extender/pod.cc
#include "lib/extender/pod.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/assignment/ids.h"
#include "lib/base/json_access.h"

namespace neuron::extender {
namespace {

using nlohmann::json;

// requests[r], else limits[r] (limits imply requests for extended resources).
absl::StatusOr<NeuronRequest> ContainerRequest(const json& c, const std::string& where) {
  NeuronRequest out;
  if (!c.is_object()) return absl::InvalidArgumentError(where + " is not an object");
  const json* res = Member(c, "resources");
  if (!res) return out;
  if (!res->is_object()) return absl::InvalidArgumentError(where + ".resources is not an object");
  const json* req = Member(*res, "requests");
  const json* lim = Member(*res, "limits");
  for (const json* m : {req, lim}) {
    if (m && !m->is_object()) {
      return absl::InvalidArgumentError(where + ".resources requests/limits is not an object");
    }
  }
  for (auto [name, field] : {std::pair{assignment::kNeuronResource, &out.devices},
                             std::pair{assignment::kNeuronCoreResource, &out.cores}}) {
    const json* q = req ? Member(*req, name) : nullptr;
    if (!q && lim) q = Member(*lim, name);
    if (!q) continue;
    absl::StatusOr<int64_t> n = ParseCount(*q, absl::StrCat(where, " ", name));
    if (!n.ok()) return n.status();
    *field = *n;
  }
  return out;
}

void Add(NeuronRequest& a, const NeuronRequest& b) {
  a.devices += b.devices;
  a.cores += b.cores;
}
void Max(NeuronRequest& a, const NeuronRequest& b) {
  a.devices = std::max(a.devices, b.devices);
  a.cores = std::max(a.cores, b.cores);
}

}  // namespace

absl::StatusOr<int64_t> ParseCount(const json& q, const std::string& what) {
  int64_t n = 0;
  if (q.is_number_integer()) {
    if (q.is_number_unsigned() && q.get<uint64_t>() > static_cast<uint64_t>(kMaxRequest)) {
      n = kMaxRequest + 1;
    } else {
      n = q.get<int64_t>();
    }
  } else if (q.is_string()) {
    const std::string s = q.get<std::string>();
    if (s.empty() || s.size() > 20 ||
        !std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || c == '-' || c == '+'; }) ||
        !absl::SimpleAtoi(s, &n)) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": \"", s.substr(0, 40), "\" is not a whole number of IDs"));
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat(what, ": quantity must be a string or integer"));
  }
  if (n < 0) return absl::InvalidArgumentError(absl::StrCat(what, ": negative request ", n));
  if (n > kMaxRequest) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": request above ", kMaxRequest, " is larger than any node"));
  }
  return n;
}

absl::StatusOr<NeuronRequest> EffectiveRequest(const json& spec) {
  NeuronRequest total;
  if (!spec.is_object()) return absl::InvalidArgumentError("pod spec is not an object");
  if (const json* cs = Member(spec, "containers")) {
    if (!cs->is_array()) return absl::InvalidArgumentError("spec.containers is not an array");
    for (size_t i = 0; i < cs->size(); ++i) {
      absl::StatusOr<NeuronRequest> r =
          ContainerRequest((*cs)[i], absl::StrCat("containers[", i, "]"));
      if (!r.ok()) return r.status();
      Add(total, *r);
    }
  }
  NeuronRequest sidecars, init_max;
  if (const json* ics = Member(spec, "initContainers")) {
    if (!ics->is_array()) return absl::InvalidArgumentError("spec.initContainers is not an array");
    for (size_t i = 0; i < ics->size(); ++i) {
      const json& c = (*ics)[i];
      absl::StatusOr<NeuronRequest> r =
          ContainerRequest(c, absl::StrCat("initContainers[", i, "]"));
      if (!r.ok()) return r.status();
      NeuronRequest during = *r;
      if (StringMember(c, "restartPolicy") ==
          "Always") {  // sidecar: runs alongside everything after
        Add(total, *r);
        Add(sidecars, *r);
        during = sidecars;
      } else {
        Add(during, sidecars);
      }
      Max(init_max, during);
    }
  }
  Max(total, init_max);
  if (total.devices > kMaxRequest || total.cores > kMaxRequest) {
    return absl::InvalidArgumentError(
        absl::StrCat("pod requests more than ", kMaxRequest, " Neuron IDs in total"));
  }
  return total;
}

absl::StatusOr<PodInfo> ParsePod(const json& pod) {
  if (!pod.is_object()) return absl::InvalidArgumentError("Pod is not an object");
  PodInfo p;
  const json* md = Member(pod, "metadata");
  if (md && !md->is_object()) return absl::InvalidArgumentError("Pod metadata is not an object");
  if (md) {
    p.ns = StringMember(*md, "namespace");
    p.name = StringMember(*md, "name");
    p.uid = StringMember(*md, "uid");
    if (const json* ann = Member(*md, "annotations"); ann && ann->is_object()) {
      assignment::Annotations handshake;
      for (const char* k : {assignment::kAnnotationIds, assignment::kAnnotationType,
                            assignment::kAnnotationAllocated}) {
        if (const json* v = Member(*ann, k); v && v->is_string()) handshake[k] = *v;
      }
      if (absl::StatusOr<assignment::Assignment> a = assignment::Parse(handshake); a.ok()) {
        p.assignment = *std::move(a);
      }
    }
  }
  if (p.ns.empty()) p.ns = "default";
  if (md) {
    p.group = ParsePodGroup(p.ns, Member(*md, "labels"), Member(*md, "annotations"));
  }
  if (const json* spec = Member(pod, "spec")) {
    p.node_name = StringMember(*spec, "nodeName");
    p.scheduler_name = StringMember(*spec, "schedulerName");
    absl::StatusOr<NeuronRequest> r = EffectiveRequest(*spec);
    if (!r.ok()) return r.status();
    p.request = *r;
  }
  if (const json* st = Member(pod, "status")) p.phase = StringMember(*st, "phase");
  return p;
}

const JsonKeep& PodFields() {
  static const JsonKeep* keep = [] {
    const JsonKeep container = JsonKeep::Of({{"resources", {}}, {"restartPolicy", {}}});
    auto* k = new JsonKeep(JsonKeep::Of({
        {"metadata",
         JsonKeep::Of({{"name", {}},
                       {"namespace", {}},
                       {"uid", {}},
                       {"resourceVersion", {}},
                       {"labels", JsonKeep::Of({{kPodGroupLabel, {}},
                                                {kUltraServerNodesKey, {}},
                                                {kLwsGroupKeyLabel, {}}})},
                       {"annotations", JsonKeep::Of({{assignment::kAnnotationIds, {}},
                                                     {assignment::kAnnotationType, {}},
                                                     {assignment::kAnnotationAllocated, {}},
                                                     {kUltraServerNodesKey, {}},
                                                     {kLwsSizeAnnotation, {}},
                                                     {kLwsExclusiveAnnotation, {}}})}})},
        {"spec", JsonKeep::Of({{"nodeName", {}},
                               {"schedulerName", {}},
                               {"containers", JsonKeep::EachItem(container)},
                               {"initContainers", JsonKeep::EachItem(container)}})},
        {"status", JsonKeep::Of({{"phase", {}}})},
    }));
    return k;
  }();
  return *keep;
}

}  // namespace neuron::extender
