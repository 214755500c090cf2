// File: lib/cache/node_report.cc
// NodeController's bookkeeping: store entries (with Events on failures), garbage collection and
// the NeuronCacheNode report.
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/cache/compile_cache.h"
#include "lib/cache/node_controller.h"
#include "spdlog/spdlog.h"

namespace neuron::cache {
namespace {

constexpr char kFieldManager[] = "neuron-node-agent";

nlohmann::json Involved(const CacheSpec& s) {
  nlohmann::json meta = {{"name", s.name}, {"uid", s.uid}};
  if (!s.namespace_.empty()) meta["namespace"] = s.namespace_;
  return {{"apiVersion", "k8s.aws/v1alpha1"}, {"kind", s.kind}, {"metadata", meta}};
}

NodeCacheRecord RecordOf(const CacheKey& key, const CacheEntry& e) {
  NodeCacheRecord r;
  r.kind = key.kind == CacheKind::kCluster ? kClusterNeuronCacheKind : kNeuronCacheKind;
  r.namespace_ = key.kind == CacheKind::kCluster ? "" : key.namespace_;
  r.name = key.name;
  r.image = e.image;
  r.digest = e.digest;
  r.state = std::string(CacheStateName(e.state));
  r.reason = e.reason;
  r.message = e.message;
  r.last_transition = e.updated;
  return r;
}

// "NeuronCache/<namespace>/<name>" or "ClusterNeuronCache/<name>" (CacheKey::ToString()).
NodeCacheRecord RetiredRecord(const std::string& key, const std::string& digest) {
  NodeCacheRecord r;
  const std::vector<std::string> parts = absl::StrSplit(key, '/');
  r.kind = parts.front();
  r.name = parts.back();
  if (parts.size() == 3) r.namespace_ = parts[1];
  r.digest = digest;
  r.state = "Extracted";
  r.reason = "Retired";
  r.message = "no longer given to new pods on this node; kept while pods use it";
  return r;
}

}  // namespace

void NodeController::SetEntry(const CacheKey& key, CacheEntry entry, const CacheSpec* event_for) {
  absl::StatusOr<std::optional<CacheEntry>> current = store_.ReadEntry(key);
  const bool changed = !current.ok() || !current->has_value() || (*current)->state != entry.state ||
                       (*current)->digest != entry.digest;
  if (!changed && (*current)->message == entry.message && (*current)->reason == entry.reason) {
    return;
  }
  entry.updated = changed ? absl::Now() : (*current)->updated;
  if (absl::Status s = store_.WriteEntry(key, entry); !s.ok()) {
    spdlog::error("compile caches: cannot record {} error=\"{}\"", key.ToString(),
                  std::string(s.message()));
    return;
  }
  spdlog::info("compile caches: {} state={} digest={} reason={} message=\"{}\"", key.ToString(),
               CacheStateName(entry.state), entry.digest, entry.reason, entry.message);
  if (event_for != nullptr && changed) {
    (void)events_.Event(Involved(*event_for), k8s::kEventWarning, entry.reason,
                        absl::StrCat("node ", opts_.node_name, ": ", entry.message));
  }
}

void NodeController::Collect(const std::set<std::string>& keep) {
  absl::StatusOr<std::vector<std::string>> removed = store_.GarbageCollect(keep);
  if (!removed.ok()) {
    spdlog::warn("compile caches: garbage collection failed error=\"{}\"",
                 std::string(removed.status().message()));
    return;
  }
  for (const std::string& digest : *removed) {
    spdlog::info("compile caches: removed image digest={} (no cache wants it, no pod uses it)",
                 digest);
  }
}

absl::Status NodeController::Report() {
  NodeCacheReport report;
  report.node_name = opts_.node_name;
  report.node_uid = node_uid_;
  if (opts_.pull.family) report.family = CompilerTargetFor(*opts_.pull.family).value_or("");
  absl::StatusOr<std::vector<std::pair<CacheKey, CacheEntry>>> entries = store_.ListEntries();
  if (!entries.ok()) return entries.status();
  absl::StatusOr<std::vector<RefInfo>> refs = store_.ListRefs();
  if (!refs.ok()) return refs.status();
  std::map<std::string, std::vector<PodUse>> pods;  // by cache key
  std::set<std::string> images;
  for (const RefInfo& ref : *refs) {
    pods[ref.cache].push_back({ref.pod_namespace, ref.pod_name, ref.pod_uid, ref.digest});
    images.insert(ref.digest);
  }
  int ready = 0;
  for (const auto& [key, entry] : *entries) {
    NodeCacheRecord record = RecordOf(key, entry);
    record.pods = pods[key.ToString()];
    if (entry.state == CacheState::kExtracted) {
      ++ready;
      images.insert(entry.digest);
      if (auto info = store_.ReadImageInfo(entry.digest); info.ok()) {
        record.bytes = static_cast<int64_t>(info->bytes);
      }
    }
    report.caches.push_back(std::move(record));
    pods.erase(key.ToString());
  }
  // Pods still on a cache this node no longer serves (deleted, or its selector moved): reported
  // so the operator keeps the cache's in-use finalizer until they end.
  for (auto& [key, users] : pods) {
    if (users.empty()) continue;
    NodeCacheRecord record = RetiredRecord(key, users.front().digest);
    record.pods = std::move(users);
    report.caches.push_back(std::move(record));
  }
  for (const std::string& digest : images) {
    if (auto info = store_.ReadImageInfo(digest); info.ok()) {
      report.disk_bytes += static_cast<int64_t>(info->bytes);
    }
  }
  if (metrics_ != nullptr) {
    metrics_->Holding(static_cast<int>(images.size()), ready,
                      static_cast<uint64_t>(report.disk_bytes));
  }
  nlohmann::json object = BuildCacheNodeObject(report);
  if (object == last_report_) return absl::OkStatus();
  absl::StatusOr<nlohmann::json> applied =
      client_->Apply(kNeuronCacheNodes, "", object, kFieldManager, /*force=*/true);
  if (!applied.ok()) return applied.status();
  last_report_ = std::move(object);
  return absl::OkStatus();
}

}  // namespace neuron::cache
