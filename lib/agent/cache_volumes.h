// File: lib/agent/cache_volumes.h
// What the CSI driver (lib/csi) asks of this node's caches: the inline volume's attributes name
// a NeuronCache in the pod's namespace (neuronCache) or a ClusterNeuronCache
// (clusterNeuronCache); the volume gets that cache's extracted copy when it is ready here, and
// is recorded as a user of the image (so garbage collection keeps it) until unpublished.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "lib/cache/cache_store.h"
#include "lib/cache/node_metrics.h"
#include "lib/csi/volume_backend.h"

namespace neuron::agent {

class CacheVolumes : public csi::VolumeBackend {
 public:
  // `metrics` may be null; `changed` (may be empty) runs after a volume starts or stops using
  // a cache (the node controller reports it).
  CacheVolumes(cache::CacheStore& store, std::string node_name, cache::CacheMetrics* metrics,
               std::function<void()> changed);

  // Unavailable (the kubelet retries; the message lands in the pod's FailedMount event) while
  // the cache is not extracted here; NotFound when no such cache selects this node;
  // InvalidArgument for attributes that name no cache or two.
  absl::StatusOr<std::string> Acquire(const std::string& volume_id,
                                      const std::map<std::string, std::string>& context) override;
  void Release(const std::string& volume_id) override;

 private:
  cache::CacheStore& store_;
  const std::string node_name_;
  cache::CacheMetrics* metrics_;
  std::function<void()> changed_;
};

}  // namespace neuron::agent
