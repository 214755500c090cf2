// File: lib/deviceplugin/handshake.cc
#include "lib/deviceplugin/handshake.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"

namespace neuron::deviceplugin {
namespace {

std::string Get(const std::map<std::string, std::string>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? "" : it->second;
}

}  // namespace

std::vector<AnnotationPatch> PlanHandshake(const std::vector<PodHoldings>& held,
                                           const std::vector<PodAnnotations>& pods) {
  std::vector<AnnotationPatch> out;
  for (const PodHoldings& h : held) {
    if (h.ids.empty()) continue;
    auto pod = std::find_if(pods.begin(), pods.end(), [&](const PodAnnotations& p) {
      return p.ns == h.ns && p.name == h.name;
    });
    if (pod == pods.end()) continue;  // not (yet) visible in the API
    assignment::ResourceKind kind = h.ids.begin()->first;
    if (h.ids.size() > 1) {  // holds both: the kind the extender named, else cores
      std::optional<assignment::ResourceKind> named =
          assignment::ParseResourceKind(Get(pod->annotations, assignment::kAnnotationType));
      kind = named && h.ids.count(*named) ? *named : assignment::ResourceKind::kCore;
    }
    std::vector<int> ids = h.ids.at(kind);
    std::sort(ids.begin(), ids.end());
    const assignment::Annotations want = assignment::Format({kind, ids, true, std::nullopt});
    AnnotationPatch patch{pod->ns, pod->name, {}};
    for (const auto& [k, v] : want) {
      if (Get(pod->annotations, k) != v) patch.set[k] = v;
    }
    if (!patch.set.empty()) out.push_back(std::move(patch));
  }
  return out;
}

std::optional<std::vector<int>> PendingChoice(const std::vector<PodAnnotations>& pods,
                                              assignment::ResourceKind kind, int size) {
  std::optional<std::vector<int>> best;
  int64_t best_time = std::numeric_limits<int64_t>::max();
  for (const PodAnnotations& p : pods) {
    // Only an explicit NEURON_ALLOCATED=false is a choice still waiting for Allocate.
    if (Get(p.annotations, assignment::kAnnotationAllocated) != "false") continue;
    absl::StatusOr<assignment::Assignment> a = assignment::Parse(p.annotations);
    if (!a.ok() || a->kind != kind) continue;
    if (static_cast<int>(a->ids.size()) != size) continue;
    // A choice without a time sorts last.
    const int64_t t = a->chosen_at_ns.value_or(std::numeric_limits<int64_t>::max());
    if (!best || t < best_time) {
      best = std::move(a->ids);
      best_time = t;
    }
  }
  return best;
}

std::optional<std::map<std::string, std::string>> PendingPodFor(
    const std::vector<PodAnnotations>& pods, assignment::ResourceKind kind,
    const std::vector<int>& ids) {
  std::vector<int> want = ids;
  std::sort(want.begin(), want.end());
  const PodAnnotations* best = nullptr;
  int64_t best_time = std::numeric_limits<int64_t>::max();
  for (const PodAnnotations& p : pods) {
    if (Get(p.annotations, assignment::kAnnotationAllocated) != "false") continue;
    absl::StatusOr<assignment::Assignment> a = assignment::Parse(p.annotations);
    if (!a.ok() || a->kind != kind) continue;
    std::vector<int> have = a->ids;
    std::sort(have.begin(), have.end());
    if (have != want) continue;
    const int64_t t = a->chosen_at_ns.value_or(std::numeric_limits<int64_t>::max());
    if (best == nullptr || t < best_time) {
      best = &p;
      best_time = t;
    }
  }
  if (best == nullptr) return std::nullopt;
  return best->annotations;
}

std::optional<std::map<std::string, std::string>> Handshake::PendingPodFor(
    assignment::ResourceKind kind, const std::vector<int>& ids) {
  absl::StatusOr<std::vector<PodAnnotations>> pods = pods_.ListNodePods();
  if (!pods.ok()) {
    spdlog::warn("pod list for allocate failed error=\"{}\"", std::string(pods.status().message()));
    return std::nullopt;
  }
  return deviceplugin::PendingPodFor(*pods, kind, ids);
}

absl::Status Handshake::Reconcile() {
  absl::StatusOr<std::vector<PodHoldings>> held = holdings_();
  if (!held.ok()) return held.status();
  absl::StatusOr<std::vector<PodAnnotations>> pods = pods_.ListNodePods();
  if (!pods.ok()) return pods.status();
  absl::Status first;
  for (const AnnotationPatch& p : PlanHandshake(*held, *pods)) {
    absl::Status s = pods_.PatchAnnotations(p.ns, p.name, p.set);
    if (s.ok()) {
      absl::MutexLock lock(&mu_);
      ++patches_;
      spdlog::info("pod annotated pod={}/{} ids={}", p.ns, p.name,
                   Get(p.set, assignment::kAnnotationIds));
    } else {
      spdlog::warn("pod annotation failed pod={}/{} error=\"{}\"", p.ns, p.name,
                   std::string(s.message()));
      if (first.ok()) first = s;
    }
  }
  return first;
}

int Handshake::patches_applied() const {
  absl::MutexLock lock(&mu_);
  return patches_;
}

std::optional<std::vector<int>> Handshake::HintFor(assignment::ResourceKind kind, int size) {
  absl::StatusOr<std::vector<PodAnnotations>> pods = pods_.ListNodePods();
  if (!pods.ok()) {
    spdlog::warn("pod list for preferred allocation failed error=\"{}\"",
                 std::string(pods.status().message()));
    return std::nullopt;
  }
  return PendingChoice(*pods, kind, size);
}

}  // namespace neuron::deviceplugin
