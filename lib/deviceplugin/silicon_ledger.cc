// File: lib/deviceplugin/silicon_ledger.cc
#include "lib/deviceplugin/silicon_ledger.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace neuron::deviceplugin {
namespace {

assignment::ResourceKind Other(assignment::ResourceKind kind) {
  return kind == assignment::ResourceKind::kDevice ? assignment::ResourceKind::kCore
                                                   : assignment::ResourceKind::kDevice;
}

}  // namespace

int DeviceOf(assignment::ResourceKind kind, int id, const NodeSnapshot& node) {
  if (kind == assignment::ResourceKind::kDevice) return id;
  const int cpd = node.cores_per_device();
  return cpd > 0 ? id / cpd : -1;
}

SiliconLedger::SiliconLedger(ListFn list, Clock& clock, absl::Duration recent_ttl)
    : list_(std::move(list)), clock_(clock), ttl_(recent_ttl) {}

std::optional<std::vector<PodHoldings>> SiliconLedger::List() {
  if (!list_) return std::nullopt;
  absl::StatusOr<std::vector<PodHoldings>> listed = list_();
  if (!listed.ok()) {
    spdlog::warn(
        "pod-resources list failed; only this process's recent allocations count "
        "error=\"{}\"",
        std::string(listed.status().message()));
    return std::nullopt;
  }
  return *std::move(listed);
}

void SiliconLedger::Prune(const std::optional<std::vector<PodHoldings>>& listed) {
  const absl::Time now = clock_.Now();
  std::map<assignment::ResourceKind, std::set<int>> listed_ids;
  if (listed) {
    for (const PodHoldings& pod : *listed) {
      for (const auto& [kind, ids] : pod.ids) listed_ids[kind].insert(ids.begin(), ids.end());
    }
  }
  std::erase_if(recent_, [&](const Recent& r) {
    if (now - r.at >= ttl_) return true;
    if (!listed) return false;
    const std::set<int>& have = listed_ids[r.kind];
    return std::all_of(r.ids.begin(), r.ids.end(), [&](int id) { return have.count(id) > 0; });
  });
}

std::map<int, std::string> SiliconLedger::Held(
    assignment::ResourceKind through, const NodeSnapshot& node,
    const std::optional<std::vector<PodHoldings>>& listed) const {
  std::map<int, std::string> out;
  if (listed) {
    for (const PodHoldings& pod : *listed) {
      auto it = pod.ids.find(through);
      if (it == pod.ids.end()) continue;
      for (int id : it->second) {
        const int d = DeviceOf(through, id, node);
        if (d >= 0) out.emplace(d, absl::StrCat("pod ", pod.ns, "/", pod.name));
      }
    }
  }
  const absl::Time now = clock_.Now();
  for (const Recent& r : recent_) {
    if (r.kind != through) continue;
    for (int id : r.ids) {
      const int d = DeviceOf(through, id, node);
      if (d < 0) continue;
      out.emplace(d, absl::StrCat("a container allocated ", absl::FormatDuration(now - r.at),
                                  " ago (its pod is not listed by the kubelet's PodResources "
                                  "yet)"));
    }
  }
  return out;
}

std::map<int, std::string> SiliconLedger::HeldByOther(assignment::ResourceKind kind,
                                                      const NodeSnapshot& node) {
  const std::optional<std::vector<PodHoldings>> listed = List();
  absl::MutexLock lock(&mu_);
  Prune(listed);
  return Held(Other(kind), node, listed);
}

absl::Status SiliconLedger::Claim(assignment::ResourceKind kind, const NodeSnapshot& node,
                                  const std::vector<int>& ids) {
  const std::optional<std::vector<PodHoldings>> listed = List();
  absl::MutexLock lock(&mu_);
  Prune(listed);
  const std::map<int, std::string> held = Held(Other(kind), node, listed);
  // device -> the requested IDs on it, for a message that says what overlaps what.
  std::map<int, std::vector<int>> clash;
  for (int id : ids) {
    const int d = DeviceOf(kind, id, node);
    if (held.count(d) > 0) clash[d].push_back(id);
  }
  if (!clash.empty()) {
    std::vector<std::string> parts;
    for (const auto& [d, on] : clash) {
      parts.push_back(absl::StrCat("device ", d, " (", assignment::ResourceName(kind), " IDs ",
                                   absl::StrJoin(on, ","), ") is held through ",
                                   assignment::ResourceName(Other(kind)), " by ", held.at(d)));
    }
    return absl::FailedPreconditionError(absl::StrCat(
        absl::StrJoin(parts, "; "), ": refusing to hand the same silicon to a second pod"));
  }
  // A kubelet retry of the same Allocate refreshes its entry instead of adding one.
  std::vector<int> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  std::erase_if(recent_, [&](const Recent& r) { return r.kind == kind && r.ids == sorted; });
  recent_.push_back({kind, std::move(sorted), clock_.Now()});
  return absl::OkStatus();
}

int SiliconLedger::recent_count() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(recent_.size());
}

}  // namespace neuron::deviceplugin
