// The records the node's cache store keeps as JSON files (see cache_store.h for where): the state
// of one NeuronCache / ClusterNeuronCache on this node, what an extracted image holds, and who
// uses an image. Also the name and digest checks every path built from these goes through.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace neuron::cache {

enum class CacheKind { kNamespaced, kCluster };

// One NeuronCache (namespace + name) or ClusterNeuronCache (name; namespace_ is ignored).
struct CacheKey {
  CacheKind kind = CacheKind::kNamespaced;
  std::string namespace_;
  std::string name;
  // "NeuronCache/<namespace>/<name>" or "ClusterNeuronCache/<name>".
  std::string ToString() const;
  bool operator==(const CacheKey&) const = default;
};

// The directory name of a kind under <root>/entries: "NeuronCache", "ClusterNeuronCache".
std::string_view CacheKindName(CacheKind kind);

enum class CacheState { kPending, kPulling, kExtracted, kFailed, kIncompatible };

// "Pending", "Pulling", "Extracted", "Failed", "Incompatible".
std::string_view CacheStateName(CacheState state);
// InvalidArgument for anything but the five names above.
absl::StatusOr<CacheState> ParseCacheState(std::string_view name);

struct CacheEntry {
  std::string image, digest;
  CacheState state = CacheState::kPending;
  std::string reason, message;
  int64_t generation = 0;
  absl::Time updated;
};

struct ImageInfo {
  std::string digest;
  uint64_t bytes = 0, files = 0, modules = 0;
  std::vector<std::string> targets;
  absl::Time extracted_at;
};

// A user of an image: a CSI volume (user "csi") or a DRA claim (user "dra"), id = volume id or
// claim UID.
struct RefInfo {
  std::string id, digest, user, pod_namespace, pod_name, pod_uid;
  absl::Time since;
  std::string cache = {};  // CacheKey::ToString() of the cache the user asked for
};

// `[A-Za-z0-9][A-Za-z0-9._-]*`, at most 253 characters; InvalidArgument naming `what` otherwise.
absl::Status ValidateName(std::string_view what, std::string_view name);
// "sha256:" + 64 lowercase hex digits; InvalidArgument otherwise.
absl::Status ValidateDigest(std::string_view digest);
// The 64 hex digits of a valid digest (after ValidateDigest).
std::string_view DigestHex(std::string_view digest);

// JSON encodings of the files (compact, one object). Parsers return DataLoss naming `source`
// (a path) for malformed text, so an admin knows which file to look at.
std::string CacheEntryToJson(const CacheEntry& entry);
absl::StatusOr<CacheEntry> CacheEntryFromJson(std::string_view text, std::string_view source);
std::string ImageInfoToJson(const ImageInfo& info);
absl::StatusOr<ImageInfo> ImageInfoFromJson(std::string_view text, std::string_view source);
// The ref's id is its file name, not part of the JSON; the parser leaves `id` empty.
std::string RefInfoToJson(const RefInfo& ref);
absl::StatusOr<RefInfo> RefInfoFromJson(std::string_view text, std::string_view source);

}  // namespace neuron::cache
