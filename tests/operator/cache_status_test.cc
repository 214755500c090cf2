// File: tests/operator/cache_status_test.cc
// The cache status as pure functions: node records summed (failures capped and by node, pods
// on another digest counted outdated), the message naming whom a deletion waits for, and the
// record index at 5,000 nodes: a report touches only the caches it changes.
#include "lib/operator/cache_status.h"

#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "catch2/catch.hpp"
#include "lib/operator/cache_record_index.h"

namespace neuron::op {
namespace {

using nlohmann::json;

cache::NodeCacheRecord Rec(const std::string& name, const std::string& state,
                           std::vector<cache::PodUse> pods = {}) {
  cache::NodeCacheRecord r;
  r.kind = cache::kNeuronCacheKind;
  r.namespace_ = "team";
  r.name = name;
  r.state = state;
  r.pods = std::move(pods);
  return r;
}

TEST_CASE("failures are capped at 10, by node; outdated pods are those on another digest",
          "[operator][cache]") {
  NodeRecords recs;
  for (int i = 14; i >= 0; --i) {
    recs.emplace_back(absl::StrCat("node-", i < 10 ? "0" : "", i), Rec("c", "Failed"));
  }
  recs.emplace_back(
      "node-x",
      Rec("c", "Extracted", {{"team", "b", "u", "sha256:new"}, {"team", "a", "u", "sha256:old"}}));
  const CacheUsage u = AggregateUsage(recs, "sha256:new");
  CHECK(u.counts.nodes_selected == 16);
  CHECK(u.counts.nodes_failed == 15);
  REQUIRE(u.failures.size() == kMaxCacheFailures);
  CHECK(u.failures.front().node == "node-00");
  CHECK(u.failures.back().node == "node-09");
  CHECK(u.counts.pods_using == 2);
  CHECK(u.counts.pods_outdated == 1);
  CHECK(u.pods == std::vector<std::string>{"team/a", "team/b"});
  // Not resolved yet: no pod is outdated.
  CHECK(AggregateUsage(recs, "").counts.pods_outdated == 0);
}

TEST_CASE("a deletion's message names the first five pods", "[operator][cache]") {
  std::vector<std::string> pods;
  for (int i = 0; i < 7; ++i) pods.push_back(absl::StrCat("ns/p", i));
  CHECK(WaitingForPodsMessage(pods) ==
        "waiting for 7 pods: ns/p0, ns/p1, ns/p2, ns/p3, ns/p4, ...");
}

TEST_CASE("status conditions: Ready needs an extracted node and none pulling or failed",
          "[operator][cache]") {
  cache::CacheSpec spec;
  spec.kind = cache::kNeuronCacheKind;
  spec.image = "r.example/c:v1";
  spec.generation = 3;
  const absl::Time now = absl::FromUnixSeconds(1700000000);
  CacheUsage u;
  u.counts.nodes_selected = 2;
  u.counts.nodes_extracted = 2;
  json st = DesiredCacheStatus(spec, json(), ResolveOutcome{std::string("sha256:a"), now}, u, now);
  CHECK(st["resolvedDigest"] == "sha256:a");
  CHECK(st["observedGeneration"] == 3);
  CHECK(st["conditions"].size() == 2);  // Resolved, Ready
  // Unchanged inputs: the same status (so the controller writes nothing).
  CHECK(DesiredCacheStatus(spec, st, std::nullopt, u, now + absl::Minutes(1)) == st);
  u.counts.nodes_pulling = 1;
  st = DesiredCacheStatus(spec, st, std::nullopt, u, now);
  CHECK(st["resolvedDigest"] == "sha256:a");  // kept when not asked
  for (const json& c : st["conditions"]) {
    if (c["type"] == "Ready") CHECK(c["reason"] == "NodesPulling");
  }
}

TEST_CASE("the record index: 5,000 nodes, a report touches only what it changes",
          "[operator][cache]") {
  CacheRecordIndex index;
  constexpr int kNodes = 5000;
  const auto start = std::chrono::steady_clock::now();
  for (int n = 0; n < kNodes; ++n) {
    const std::vector<std::string> changed =
        index.Update(absl::StrCat("node-", n), {Rec("shared", "Extracted"), Rec("c", "Pulling")});
    CHECK(changed.size() == 2);
  }
  CHECK(index.Records(CacheKey(cache::kNeuronCacheKind, "team", "shared")).size() == kNodes);
  // The same report again changes nothing; one state change touches one cache.
  CHECK(index.Update("node-7", {Rec("shared", "Extracted"), Rec("c", "Pulling")}).empty());
  CHECK(index.Update("node-7", {Rec("shared", "Extracted"), Rec("c", "Extracted")}) ==
        std::vector<std::string>{"NeuronCache/team/c"});
  // A node that goes (or drops a cache) takes its records away.
  CHECK(index.Update("node-7", {}).size() == 2);
  CHECK(index.Records("NeuronCache/team/shared").size() == kNodes - 1);
  CHECK(index.Update("node-8", {Rec("shared", "Extracted")}) ==
        std::vector<std::string>{"NeuronCache/team/c"});
  CHECK(index.NumCaches() == 2);
  const CacheUsage u = AggregateUsage(index.Records("NeuronCache/team/shared"), "");
  CHECK(u.counts.nodes_extracted == kNodes - 1);
  // Generous bound (shared CI machines): the point is no quadratic walk.
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

}  // namespace
}  // namespace neuron::op
