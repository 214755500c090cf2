// File: lib/deviceplugin/pod_cache.h
// A watch-backed PodDirectory: a lib/k8s Informer on pods with field selector
// spec.nodeName=<node>, each pod parsed only as far as the handshake reads it, so
// GetPreferredAllocation's hint and the handshake's resync read a local cache instead of listing
// pods from the API.
//
//   CachedPodDirectory pods(client, "node-a");
//   pods.Start();
//   pods.WaitForSync(absl::Seconds(5));   // until then ListNodePods lists from the API
//   Handshake hs(pods, holdings);
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "lib/base/json_prune.h"
#include "lib/deviceplugin/handshake.h"
#include "lib/deviceplugin/k8s_pod_directory.h"
#include "lib/k8s/informer.h"
#include "lib/k8s/rest_client.h"
#include "nlohmann/json.hpp"

namespace neuron::deviceplugin {

// What the cache keeps of a pod: its identity (resourceVersion too: the store tells changed
// objects by it after a relist) and the handshake's annotation keys; nothing else is read.
const JsonKeep& PodCacheFields();

// metadata.namespace/name and the string-valued annotations of a pod object.
PodAnnotations PodAnnotationsOf(const nlohmann::json& pod);

class CachedPodDirectory final : public PodDirectory {
 public:
  CachedPodDirectory(std::shared_ptr<k8s::RestClient> client, const std::string& node_name,
                     k8s::ReflectorOptions opts = {});
  ~CachedPodDirectory() override;  // stops

  void Start();
  void Stop();
  bool HasSynced() const;
  bool WaitForSync(absl::Duration timeout) const;

  // From the cache once synced; before that, one list from the API (as K8sPodDirectory).
  absl::StatusOr<std::vector<PodAnnotations>> ListNodePods() override;
  // JSON merge patch through the API (the cache learns the result from the watch).
  absl::Status PatchAnnotations(const std::string& ns, const std::string& name,
                                const std::map<std::string, std::string>& set) override;

  // The cached (trimmed) pods, keyed "ns/name".
  const k8s::Store& store() const { return informer_->store(); }

 private:
  std::shared_ptr<k8s::RestClient> client_;
  K8sPodDirectory direct_;
  std::unique_ptr<k8s::Informer> informer_;
};

}  // namespace neuron::deviceplugin
