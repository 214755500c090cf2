// File: lib/csi/claim_cache_mounts.h
// The DRA driver's compile caches (dra::CacheMounts) on a node: a claim naming a NeuronCache gets
// the same private writable overlay a CSI volume gets, made under
// <cache_dir>/claims/<claim uid>/{upper,work,view}; the DRA driver bind-mounts `view` into the
// containers through CDI. The claim is recorded as a user of the image (so it is not garbage
// collected) until Release. Runs in the device-plugin process, next to the node agent that fills
// the store (lib/cache): the store's files are the contract between the two.
#pragma once

#include <string>

#include "absl/synchronization/mutex.h"
#include "lib/cache/cache_store.h"
#include "lib/csi/mounter.h"
#include "lib/dra/cache_mounts.h"

namespace neuron::csi {

class ClaimCacheMounts : public dra::CacheMounts {
 public:
  // `store` reads the agent's cache directory; `mounter` makes the views.
  ClaimCacheMounts(cache::CacheStore& store, Mounter& mounter);

  // Unavailable while the cache is not extracted on this node (the kubelet retries and the pod
  // waits with the message in its events); the same directory again for the same claim.
  absl::StatusOr<std::string> Prepare(const dra::CacheMountRequest& req) override;
  absl::Status Release(const std::string& claim_uid) override;

 private:
  std::string ClaimDir(const std::string& claim_uid) const;

  cache::CacheStore& store_;
  Mounter& mounter_;
  absl::Mutex mu_;  // one claim at a time: the kubelet prepares claims concurrently
};

}  // namespace neuron::csi
