// File: lib/csi/volume_backend.h
// What the CSI node driver asks of the node's compile caches: which directory a volume shows
// (read-only underneath the pod's writable overlay), and when that directory is no longer used.
// Implemented over the node's cache store elsewhere; the driver only calls it.
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace neuron::csi {

class VolumeBackend {
 public:
  virtual ~VolumeBackend() = default;
  // The directory to show read-only-underneath for this volume, or an error whose code and
  // message reach the kubelet unchanged (it puts them in the pod's FailedMount event), e.g.
  // Unavailable "cache team/llama not extracted on this node yet: Pulling". `context` is
  // NodePublishVolumeRequest.volume_context (volumeAttributes + csi.storage.k8s.io/* pod info).
  // Called from gRPC threads, never twice at once for the same volume_id.
  virtual absl::StatusOr<std::string> Acquire(
      const std::string& volume_id, const std::map<std::string, std::string>& context) = 0;
  // The volume is gone. Also called for volumes acquired by an earlier process (after a
  // restart the driver unpublishes from its records), so an unknown id must be harmless.
  virtual void Release(const std::string& volume_id) = 0;
};

}  // namespace neuron::csi
