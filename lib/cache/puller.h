// File: lib/cache/puller.h
// One image, registry to node directory: resolve the manifest by digest (verified), fetch each
// layer blob to a scratch file (verified against its digest before a byte is extracted), extract
// it safely into a staging directory, check the compile cache's target against the node's chip,
// and commit (rename) the staging directory: a cache appears whole or not at all.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/cache/cache_store.h"
#include "lib/cache/image_reference.h"
#include "lib/cache/layer_extractor.h"
#include "lib/cache/registry_client.h"
#include "lib/topology/device_model.h"

namespace neuron::cache {

struct PullOptions {
  ExtractLimits limits;
  // The node's chip; unset = unknown (no compatibility check, said in the log).
  std::optional<topology::Family> family;
};

struct PullResult {
  ImageInfo info;
  bool already_present = false;  // the digest was extracted before: nothing fetched
  uint64_t fetched_bytes = 0;    // compressed layer bytes downloaded
  absl::Duration fetch_time;     // registry time
  absl::Duration extract_time;   // libarchive time
};

// Status codes: FailedPrecondition = the cache targets another chip (Incompatible; nothing kept);
// DataLoss = a digest mismatch; InvalidArgument = an unsafe or malformed layer; Unavailable,
// PermissionDenied, NotFound = the registry; Cancelled = `cancelled` said so.
absl::StatusOr<PullResult> PullImage(RegistryClient& registry, CacheStore& store,
                                     const ImageReference& ref, const CredentialLookup& creds,
                                     const PullOptions& opts,
                                     const std::function<bool()>& cancelled = {});

// The state and reason a failed pull is reported with on NeuronCacheNode (CamelCase reasons:
// RegistryUnavailable, Unauthorized, ImageNotFound, DigestMismatch, InvalidImage,
// IncompatibleTarget, Cancelled, PullFailed).
struct FailureReport {
  CacheState state;
  std::string reason;
  bool retry;  // worth retrying the same digest later (the registry may recover)
};
FailureReport ClassifyPullError(const absl::Status& status);

}  // namespace neuron::cache
