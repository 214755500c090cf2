// The node's compile-cache directory. Other processes (the CSI and DRA drivers) read it, so the
// layout is a contract:
//   <root>/images/sha256/<hex>/        a complete extracted image; never modified once there
//   <root>/images/sha256/<hex>.json    ImageInfo
//   <root>/staging/<hex>.<random>/     extraction in progress (removed by Init() after a crash)
//   <root>/downloads/                  blob scratch files (emptied by Init())
//   <root>/entries/<kind>/<namespace>/<name>.json  CacheEntry of a NeuronCache (kind
//                                      "NeuronCache") or ClusterNeuronCache (namespace "_")
//   <root>/refs/<id>.json              a user of an image (CSI volume id or DRA claim UID)
// JSON files are written atomically (temp file in the same directory, fsync, rename). Names,
// ids and digests are validated before any path is built from them (InvalidArgument).
//
// Users of an image call AddRef before they check HasImage and use the image; GarbageCollect
// hides an image, then looks at the refs again and puts back any image that gained a ref, so
// an image is never deleted under a user that followed that order.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/cache/cache_entry.h"

namespace neuron::cache {

class CacheStore {
 public:
  explicit CacheStore(std::string root);

  // Creates the directories; removes staging/* and downloads/* left by a crash (logs each).
  // Only the node controller (the one writer of images) calls it; the drivers only read images
  // and write refs.
  absl::Status Init();
  const std::string& root() const { return root_; }

  // <root>/images/sha256/<hex>; "" for an invalid digest.
  std::string ImagePath(std::string_view digest) const;
  bool HasImage(std::string_view digest) const;
  // NotFound when the image is not in the store.
  absl::StatusOr<ImageInfo> ReadImageInfo(std::string_view digest) const;

  // A new, empty <root>/staging/<hex>.<random>/ to extract into.
  absl::StatusOr<std::string> NewStagingDir(std::string_view digest);
  // Flushes the staging tree to disk and renames it to the image path, after writing
  // <hex>.json from `info` (whose digest names the image). If the image already exists, the
  // staging dir is discarded and the result is OK.
  absl::Status CommitStaging(const std::string& staging_dir, const ImageInfo& info);
  // Removes a staging dir (only paths under <root>/staging/); errors are logged.
  void DiscardStaging(const std::string& staging_dir);
  // A new empty file under <root>/downloads/.
  absl::StatusOr<std::string> NewDownloadPath();

  absl::Status WriteEntry(const CacheKey& key, const CacheEntry& entry);
  // nullopt when there is no entry; DataLoss for an unreadable one.
  absl::StatusOr<std::optional<CacheEntry>> ReadEntry(const CacheKey& key) const;
  // Every entry; files that cannot be parsed are skipped with a warning.
  absl::StatusOr<std::vector<std::pair<CacheKey, CacheEntry>>> ListEntries() const;
  // OK if absent.
  absl::Status RemoveEntry(const CacheKey& key);

  // user is "csi" or "dra".
  absl::Status AddRef(const RefInfo& ref);
  absl::Status RemoveRef(std::string_view id);  // OK if absent
  // DataLoss when a ref cannot be read: garbage collection must not guess what is in use.
  absl::StatusOr<std::vector<RefInfo>> ListRefs() const;

  // Removes images whose digest is neither in `keep` nor referenced by a ref; returns the
  // digests removed. An image disappears atomically (renamed into staging/ first, then
  // deleted).
  absl::StatusOr<std::vector<std::string>> GarbageCollect(const std::set<std::string>& keep);

 private:
  std::string Dir(std::string_view sub) const;
  absl::StatusOr<std::string> EntryPath(const CacheKey& key) const;
  absl::Status CheckStagingPath(const std::string& staging_dir) const;
  absl::Status EmptyDir(std::string_view sub);
  std::set<std::string> ImageDigests() const;
  absl::StatusOr<std::string> HideImage(const std::string& digest);
  absl::Status RestoreImage(const std::string& digest, const std::string& hidden);
  absl::Status RemoveOrphanInfos(const std::set<std::string>& wanted);

  std::string root_;
};

}  // namespace neuron::cache
