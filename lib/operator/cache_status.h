// File: lib/operator/cache_status.h
// The status of a NeuronCache / ClusterNeuronCache, as pure functions: the nodes' reports
// (NeuronCacheNode records) summed into counts and failures, and the whole status block
// (resolvedDigest, conditions Resolved / Verified / Ready / Deleting) from the spec, the status
// it has now, this pass's registry answer and the sums. No I/O: cache_controller.cc writes it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/cache/cache_api.h"
#include "nlohmann/json.hpp"

namespace neuron::op {

// The work-queue key of a cache: "NeuronCache/<ns>/<name>" or "ClusterNeuronCache/<name>".
std::string CacheKey(const std::string& kind, const std::string& ns, const std::string& name);
// The key of the cache one node record is about.
std::string CacheKeyOf(const cache::NodeCacheRecord& r);

inline constexpr size_t kMaxCacheFailures = 10;  // the CRD's status.failures maxItems

struct CacheFailure {
  std::string node;
  std::string reason;
  std::string message;
  bool operator==(const CacheFailure&) const = default;
};

struct CacheCounts {
  int64_t nodes_selected = 0;  // nodes reporting the cache at all
  int64_t nodes_extracted = 0;
  int64_t nodes_pulling = 0;
  int64_t nodes_failed = 0;
  int64_t nodes_incompatible = 0;
  int64_t pods_using = 0;
  int64_t pods_outdated = 0;  // pods given a digest other than status.resolvedDigest
  bool operator==(const CacheCounts&) const = default;
};

// One cache's records over every node that reports it.
struct CacheUsage {
  CacheCounts counts;
  std::vector<CacheFailure> failures;  // at most kMaxCacheFailures, by node name
  std::vector<std::string> pods;       // "ns/name" of every pod using it, sorted
};

// `records` are (node name, that node's record of this cache). `wanted_digest` is what pods
// should have (cache::WantedDigest); "" counts no pod as outdated.
using NodeRecords = std::vector<std::pair<std::string, cache::NodeCacheRecord>>;
CacheUsage AggregateUsage(const NodeRecords& records, const std::string& wanted_digest);

// What the registry said this pass (absent: not asked, the status keeps its answer).
struct ResolveOutcome {
  absl::StatusOr<std::string> digest;
  absl::Time at;
};

// Whether spec.image names its digest (`repo@sha256:...`): nothing for a registry to resolve.
bool ImageByDigest(const cache::CacheSpec& spec);

// The digest status.resolvedDigest will hold after `resolve`: the image's own digest, else a
// resolved one the verify pin accepts, else the one it has.
std::string NextResolvedDigest(const cache::CacheSpec& spec,
                               const std::optional<ResolveOutcome>& resolve);

// The status the cache should have. `current` is its status now (null when it has none); the
// conditions' lastTransitionTime is kept where their status did not change. Deleting=True is
// set while the cache is being deleted and pods still use it.
nlohmann::json DesiredCacheStatus(const cache::CacheSpec& spec, const nlohmann::json& current,
                                  const std::optional<ResolveOutcome>& resolve,
                                  const CacheUsage& usage, absl::Time now);

// "waiting for N pods: ns/a, ns/b, ..." (the first 5 named).
std::string WaitingForPodsMessage(const std::vector<std::string>& pods);

}  // namespace neuron::op
