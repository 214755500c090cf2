// File: lib/operator/cache_status.cc
#include "lib/operator/cache_status.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/k8s/conditions.h"
#include "lib/k8s/k8s_time.h"

namespace neuron::op {
namespace {

using nlohmann::json;

void Set(json& conditions, const char* type, bool ok, const std::string& reason,
         const std::string& message, int64_t generation, absl::Time now) {
  k8s::Condition c;
  c.type = type;
  c.status = ok ? "True" : "False";
  c.reason = reason;
  c.message = message;
  c.observed_generation = generation;
  // Our own reasons and bounded messages: valid by construction, nothing to report.
  (void)k8s::SetCondition(conditions, std::move(c), now);
}

// resolvedDigest, resolvedAt and the Resolved / Verified conditions.
void ApplyResolve(const cache::CacheSpec& spec, const std::optional<ResolveOutcome>& resolve,
                  json& status, absl::Time now) {
  json& conds = status["conditions"];
  const int64_t gen = spec.generation;
  if (ImageByDigest(spec)) {  // no registry call: the image names its digest
    status["resolvedDigest"] = cache::WantedDigest(spec);
    if (!status.contains("resolvedAt")) status["resolvedAt"] = k8s::FormatRfc3339(now);
    Set(conds, "Resolved", true, "ImageByDigest", "spec.image names its digest", gen, now);
  } else if (resolve.has_value() && !resolve->digest.ok()) {
    // Keep the digest nodes have: a registry outage must not stop them serving it.
    Set(conds, "Resolved", false, "RegistryError", std::string(resolve->digest.status().message()),
        gen, now);
    return;
  } else if (resolve.has_value()) {
    const std::string& got = *resolve->digest;
    if (!spec.verify_digest.empty() && got != spec.verify_digest) {
      Set(conds, "Resolved", true, "Resolved", absl::StrCat(spec.image, " resolves to ", got), gen,
          now);
      Set(conds, "Verified", false, "DigestMismatch",
          absl::StrCat(spec.image, " resolves to ", got, " but spec.verify.digest is ",
                       spec.verify_digest, "; nodes keep the digest they have"),
          gen, now);
      return;
    }
    status["resolvedDigest"] = got;
    status["resolvedAt"] = k8s::FormatRfc3339(resolve->at);
    Set(conds, "Resolved", true, "Resolved", absl::StrCat(spec.image, " resolves to ", got), gen,
        now);
  } else {
    return;  // not asked this pass: the last answer stands
  }
  if (spec.verify_digest.empty()) {
    k8s::RemoveCondition(conds, "Verified");
  } else {
    Set(conds, "Verified", true, "DigestMatches",
        absl::StrCat("the image is ", spec.verify_digest, " as spec.verify.digest says"), gen, now);
  }
}

void ApplyReady(const cache::CacheSpec& spec, const CacheCounts& n, json& conds, absl::Time now) {
  const std::string counts =
      absl::StrCat(n.nodes_extracted, " of ", n.nodes_selected, " nodes extracted, ",
                   n.nodes_pulling, " pulling, ", n.nodes_failed, " failed, ", n.nodes_incompatible,
                   " incompatible; ", n.pods_using, " pods using it");
  std::string reason = "Extracted";
  if (n.nodes_failed > 0) {
    reason = "NodesFailed";
  } else if (n.nodes_pulling > 0) {
    reason = "NodesPulling";
  } else if (n.nodes_extracted == 0) {
    reason = "NoNodeExtracted";
  }
  Set(conds, "Ready", reason == "Extracted", reason, counts, spec.generation, now);
}

json CountsJson(const CacheCounts& n) {
  return {{"nodesSelected", n.nodes_selected},
          {"nodesExtracted", n.nodes_extracted},
          {"nodesPulling", n.nodes_pulling},
          {"nodesFailed", n.nodes_failed},
          {"nodesIncompatible", n.nodes_incompatible},
          {"podsUsing", n.pods_using},
          {"podsOutdated", n.pods_outdated}};
}

}  // namespace

bool ImageByDigest(const cache::CacheSpec& spec) {
  return spec.image.find('@') != std::string::npos;
}

std::string CacheKey(const std::string& kind, const std::string& ns, const std::string& name) {
  if (kind == cache::kClusterNeuronCacheKind) return absl::StrCat(kind, "/", name);
  return absl::StrCat(kind, "/", ns, "/", name);
}

std::string CacheKeyOf(const cache::NodeCacheRecord& r) {
  return CacheKey(r.kind, r.namespace_, r.name);
}

CacheUsage AggregateUsage(const NodeRecords& records, const std::string& wanted_digest) {
  CacheUsage u;
  CacheCounts& n = u.counts;
  for (const auto& [node, r] : records) {
    ++n.nodes_selected;
    if (r.state == "Extracted") ++n.nodes_extracted;
    if (r.state == "Pulling") ++n.nodes_pulling;
    if (r.state == "Incompatible") ++n.nodes_incompatible;
    if (r.state == "Failed") {
      ++n.nodes_failed;
      u.failures.push_back({node, r.reason, r.message});
    }
    for (const cache::PodUse& p : r.pods) {
      ++n.pods_using;
      if (!wanted_digest.empty() && p.digest != wanted_digest) ++n.pods_outdated;
      u.pods.push_back(absl::StrCat(p.namespace_, "/", p.name));
    }
  }
  std::sort(u.failures.begin(), u.failures.end(),
            [](const CacheFailure& a, const CacheFailure& b) { return a.node < b.node; });
  if (u.failures.size() > kMaxCacheFailures) u.failures.resize(kMaxCacheFailures);
  std::sort(u.pods.begin(), u.pods.end());
  return u;
}

std::string NextResolvedDigest(const cache::CacheSpec& spec,
                               const std::optional<ResolveOutcome>& resolve) {
  if (ImageByDigest(spec)) return cache::WantedDigest(spec);
  if (!resolve.has_value() || !resolve->digest.ok()) return spec.resolved_digest;
  if (!spec.verify_digest.empty() && *resolve->digest != spec.verify_digest) {
    return spec.resolved_digest;
  }
  return *resolve->digest;
}

std::string WaitingForPodsMessage(const std::vector<std::string>& pods) {
  constexpr size_t kNamed = 5;
  const size_t named = std::min(pods.size(), kNamed);
  std::string msg = absl::StrCat(
      "waiting for ", pods.size(),
      " pods: ", absl::StrJoin(pods.begin(), pods.begin() + static_cast<ptrdiff_t>(named), ", "));
  if (pods.size() > named) absl::StrAppend(&msg, ", ...");
  return msg;
}

json DesiredCacheStatus(const cache::CacheSpec& spec, const json& current,
                        const std::optional<ResolveOutcome>& resolve, const CacheUsage& usage,
                        absl::Time now) {
  json status = current.is_object() ? current : json::object();
  if (!status["conditions"].is_array()) status["conditions"] = json::array();
  ApplyResolve(spec, resolve, status, now);
  status["observedGeneration"] = spec.generation;
  status["counts"] = CountsJson(usage.counts);
  json failures = json::array();
  for (const CacheFailure& f : usage.failures) {
    failures.push_back({{"node", f.node}, {"reason", f.reason}, {"message", f.message}});
  }
  status["failures"] = std::move(failures);
  json& conds = status["conditions"];
  ApplyReady(spec, usage.counts, conds, now);
  if (spec.deleting && usage.counts.pods_using > 0) {
    Set(conds, "Deleting", true, "PodsStillUsing", WaitingForPodsMessage(usage.pods),
        spec.generation, now);
  } else {
    k8s::RemoveCondition(conds, "Deleting");
  }
  return status;
}

}  // namespace neuron::op
