// File: lib/csi/claim_cache_mounts.cc
#include "lib/csi/claim_cache_mounts.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "lib/cache/cache_api.h"
#include "spdlog/spdlog.h"

namespace neuron::csi {
namespace {

cache::CacheKey KeyOf(const dra::CacheMountRequest& req) {
  cache::CacheKey key;
  const bool cluster = req.kind == cache::kClusterNeuronCacheKind;
  key.kind = cluster ? cache::CacheKind::kCluster : cache::CacheKind::kNamespaced;
  key.namespace_ = cluster ? "_" : req.cache_namespace;
  key.name = req.cache_name;
  return key;
}

absl::Status MakeDirs(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("mkdir ", dir, ": ", ec.message()));
  return absl::OkStatus();
}

}  // namespace

ClaimCacheMounts::ClaimCacheMounts(cache::CacheStore& store, Mounter& mounter)
    : store_(store), mounter_(mounter) {}

std::string ClaimCacheMounts::ClaimDir(const std::string& claim_uid) const {
  return absl::StrCat(store_.root(), "/claims/", claim_uid);
}

absl::StatusOr<std::string> ClaimCacheMounts::Prepare(const dra::CacheMountRequest& req) {
  if (absl::Status s = cache::ValidateName("claim uid", req.claim_uid); !s.ok()) return s;
  absl::MutexLock l(&mu_);
  const std::string dir = ClaimDir(req.claim_uid);
  const std::string view = dir + "/view";
  if (mounter_.IsMounted(view)) return view;  // a retried prepare
  const cache::CacheKey key = KeyOf(req);
  absl::StatusOr<std::optional<cache::CacheEntry>> entry = store_.ReadEntry(key);
  if (!entry.ok()) return entry.status();
  const std::string what =
      req.kind == cache::kClusterNeuronCacheKind
          ? absl::StrCat("ClusterNeuronCache ", req.cache_name)
          : absl::StrCat("NeuronCache ", req.cache_namespace, "/", req.cache_name);
  if (!entry->has_value()) {
    return absl::NotFoundError(absl::StrCat(what, " is not known on this node (no such cache, ",
                                            "being deleted, or its nodeSelector leaves it out)"));
  }
  const cache::CacheEntry& e = **entry;
  if (e.state != cache::CacheState::kExtracted) {
    return absl::UnavailableError(absl::StrCat(
        what, " is not ready on this node: ", std::string(cache::CacheStateName(e.state)), " (",
        e.reason, ") ", e.message));
  }
  for (const char* sub : {"/upper", "/work", "/view"}) {
    if (absl::Status s = MakeDirs(dir + sub); !s.ok()) return s;
  }
  cache::RefInfo ref;
  ref.id = req.claim_uid;
  ref.digest = e.digest;
  ref.user = "dra";
  ref.since = absl::Now();
  ref.cache = key.ToString();
  if (!req.pods.empty()) {
    ref.pod_namespace = req.pods.front().namespace_;
    ref.pod_name = req.pods.front().name;
    ref.pod_uid = req.pods.front().uid;
  }
  // The ref before the image check (garbage collection re-reads refs before deleting).
  if (absl::Status s = store_.AddRef(ref); !s.ok()) return s;
  if (!store_.HasImage(e.digest)) {
    (void)store_.RemoveRef(req.claim_uid);
    return absl::UnavailableError(absl::StrCat(what, " is being replaced on this node: retry"));
  }
  absl::Status mounted =
      mounter_.Mount(store_.ImagePath(e.digest), dir + "/upper", dir + "/work", view);
  if (!mounted.ok()) {
    (void)store_.RemoveRef(req.claim_uid);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return mounted;
  }
  spdlog::info("compile cache claim={}/{} uid={} cache=\"{}\" digest={} view={}",
               req.claim_namespace, req.claim_name, req.claim_uid, what, e.digest, view);
  return view;
}

absl::Status ClaimCacheMounts::Release(const std::string& claim_uid) {
  if (absl::Status s = cache::ValidateName("claim uid", claim_uid); !s.ok()) return s;
  absl::MutexLock l(&mu_);
  const std::string dir = ClaimDir(claim_uid);
  const std::string view = dir + "/view";
  if (mounter_.IsMounted(view)) {
    if (absl::Status s = mounter_.Unmount(view); !s.ok()) return s;
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("remove ", dir, ": ", ec.message()));
  return store_.RemoveRef(claim_uid);
}

}  // namespace neuron::csi
