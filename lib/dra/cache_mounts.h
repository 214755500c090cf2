// File: lib/dra/cache_mounts.h
// The seam between the DRA claim preparer and the node's compiled-model caches: a claim whose
// NeuronConfig names a compileCache (neuron_config.h) gets a host directory from CacheMounts,
// which NeuronPreparer bind-mounts into the claim's containers through its CDI spec. The real
// implementation (over the node cache store and an overlay mount) lives with the cache store;
// the DRA side only asks and releases.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace neuron::dra {

// A pod a claim is reserved for (status.reservedFor[] of resource "pods"; same namespace).
struct PodRef {
  std::string namespace_;
  std::string name;
  std::string uid;
  bool operator==(const PodRef&) const = default;
};

struct CacheMountRequest {
  std::string claim_uid, claim_namespace, claim_name;
  std::string kind;             // "NeuronCache" or "ClusterNeuronCache" (lib/cache/cache_api.h)
  std::string cache_namespace;  // the claim's namespace for a NeuronCache; "" for a cluster one
  std::string cache_name;
  std::vector<PodRef> pods;  // reservedFor
  bool operator==(const CacheMountRequest&) const = default;
};

class CacheMounts {
 public:
  virtual ~CacheMounts() = default;
  // A host directory to bind-mount read-write into the containers (the claim's private writable
  // view over the node's copy), or an error (Unavailable "not extracted yet: Pulling", ...)
  // that fails this claim's preparation with that message (the kubelet retries).
  // Called again for the same claim when the kubelet repeats a preparation that did not finish
  // (a crash, a failed CDI write): it must then give the same directory.
  virtual absl::StatusOr<std::string> Prepare(const CacheMountRequest&) = 0;
  // Undoes Prepare for the claim. Idempotent: an unknown claim is fine.
  virtual absl::Status Release(const std::string& claim_uid) = 0;
};

}  // namespace neuron::dra
