// File: lib/deviceplugin/k8s_pod_directory.h
// PodDirectory over the Kubernetes API (lib/k8s): pods of this node by field selector
// spec.nodeName (one list per call), annotations changed by JSON merge patch of only the given
// keys (re-sent on 409; 429/5xx are retried by the transport). The binary uses the watch-backed
// CachedPodDirectory (pod_cache.h), which lists through this class only until its cache syncs.
#pragma once

#include <memory>
#include <string>

#include "lib/deviceplugin/handshake.h"
#include "lib/k8s/rest_client.h"

namespace neuron::deviceplugin {

class K8sPodDirectory final : public PodDirectory {
 public:
  K8sPodDirectory(std::shared_ptr<k8s::RestClient> client, std::string node_name)
      : client_(std::move(client)), node_name_(std::move(node_name)) {}

  absl::StatusOr<std::vector<PodAnnotations>> ListNodePods() override;
  absl::Status PatchAnnotations(const std::string& ns, const std::string& name,
                                const std::map<std::string, std::string>& set) override;

 private:
  std::shared_ptr<k8s::RestClient> client_;
  std::string node_name_;
};

}  // namespace neuron::deviceplugin
