// File: lib/agent/cache_volumes.cc
#include "lib/agent/cache_volumes.h"

#include "absl/strings/str_cat.h"
#include "lib/cache/cache_api.h"
#include "spdlog/spdlog.h"

namespace neuron::agent {
namespace {

std::string Get(const std::map<std::string, std::string>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? "" : it->second;
}

// The cache the attributes name, in the pod's namespace for a NeuronCache.
absl::StatusOr<cache::CacheKey> KeyFromAttributes(const std::map<std::string, std::string>& ctx) {
  const std::string name = Get(ctx, cache::kVolumeAttrCache);
  const std::string cluster = Get(ctx, cache::kVolumeAttrClusterCache);
  if (name.empty() == cluster.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "volumeAttributes must name exactly one of ", cache::kVolumeAttrCache,
        " (a NeuronCache in ", "the pod's namespace) or ", cache::kVolumeAttrClusterCache));
  }
  cache::CacheKey key;
  if (!cluster.empty()) {
    key.kind = cache::CacheKind::kCluster;
    key.namespace_ = "_";
    key.name = cluster;
    return key;
  }
  key.kind = cache::CacheKind::kNamespaced;
  key.namespace_ = Get(ctx, "csi.storage.k8s.io/pod.namespace");
  key.name = name;
  if (key.namespace_.empty()) {
    return absl::InvalidArgumentError(
        "no csi.storage.k8s.io/pod.namespace in the volume context: is podInfoOnMount set on the "
        "CSIDriver cache.neuron.aws.com?");
  }
  return key;
}

std::string Describe(const cache::CacheKey& key) {
  return key.kind == cache::CacheKind::kCluster
             ? absl::StrCat("ClusterNeuronCache ", key.name)
             : absl::StrCat("NeuronCache ", key.namespace_, "/", key.name);
}

}  // namespace

CacheVolumes::CacheVolumes(cache::CacheStore& store, std::string node_name,
                           cache::CacheMetrics* metrics, std::function<void()> changed)
    : store_(store),
      node_name_(std::move(node_name)),
      metrics_(metrics),
      changed_(std::move(changed)) {}

absl::StatusOr<std::string> CacheVolumes::Acquire(
    const std::string& volume_id, const std::map<std::string, std::string>& context) {
  absl::StatusOr<cache::CacheKey> key = KeyFromAttributes(context);
  if (!key.ok()) return key.status();
  absl::StatusOr<std::optional<cache::CacheEntry>> entry = store_.ReadEntry(*key);
  if (!entry.ok()) return entry.status();
  if (!entry->has_value()) {
    if (metrics_ != nullptr) metrics_->Mount(false);
    return absl::NotFoundError(absl::StrCat(Describe(*key), " is not known on node ", node_name_,
                                            ": it does not exist, is being deleted, or its "
                                            "nodeSelector leaves this node out"));
  }
  const cache::CacheEntry& e = **entry;
  if (e.state != cache::CacheState::kExtracted) {
    if (metrics_ != nullptr) metrics_->Mount(false);
    return absl::UnavailableError(absl::StrCat(Describe(*key), " is not ready on node ", node_name_,
                                               ": ", std::string(cache::CacheStateName(e.state)),
                                               " (", e.reason, ")", e.message.empty() ? "" : ": ",
                                               e.message));
  }
  cache::RefInfo ref;
  ref.id = volume_id;
  ref.digest = e.digest;
  ref.user = "csi";
  ref.cache = key->ToString();
  ref.pod_namespace = Get(context, "csi.storage.k8s.io/pod.namespace");
  ref.pod_name = Get(context, "csi.storage.k8s.io/pod.name");
  ref.pod_uid = Get(context, "csi.storage.k8s.io/pod.uid");
  ref.since = absl::Now();
  // The ref first, then the image check: garbage collection re-reads refs before it deletes
  // (cache_store.h), so an image seen after AddRef stays.
  if (absl::Status s = store_.AddRef(ref); !s.ok()) return s;
  if (!store_.HasImage(e.digest)) {
    (void)store_.RemoveRef(volume_id);
    if (metrics_ != nullptr) metrics_->Mount(false);
    return absl::UnavailableError(
        absl::StrCat(Describe(*key), " is being replaced on node ", node_name_, ": retry"));
  }
  if (metrics_ != nullptr) metrics_->Mount(true);
  spdlog::info("compile cache volume={} pod={}/{} cache=\"{}\" digest={}", volume_id,
               ref.pod_namespace, ref.pod_name, Describe(*key), e.digest);
  if (changed_) changed_();
  return store_.ImagePath(e.digest);
}

void CacheVolumes::Release(const std::string& volume_id) {
  if (absl::Status s = store_.RemoveRef(volume_id); !s.ok()) {
    spdlog::warn("compile cache volume={} release failed error=\"{}\"", volume_id,
                 std::string(s.message()));
  }
  if (changed_) changed_();
}

}  // namespace neuron::agent
