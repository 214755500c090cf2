// File: lib/deviceplugin/k8s_pod_directory.cc
#include "lib/deviceplugin/k8s_pod_directory.h"

#include <spdlog/spdlog.h>

#include "lib/deviceplugin/pod_cache.h"
#include "lib/k8s/incluster.h"
#include "lib/k8s/kubeconfig.h"
#include "lib/k8s/resource.h"
#include "lib/k8s/transport.h"

namespace neuron::deviceplugin {

absl::StatusOr<std::vector<PodAnnotations>> K8sPodDirectory::ListNodePods() {
  k8s::ListOptions opts;
  opts.field_selector = "spec.nodeName=" + node_name_;
  absl::StatusOr<k8s::ListResult> list = client_->ListAll(k8s::resources::kPods, "", opts);
  if (!list.ok()) return list.status();
  std::vector<PodAnnotations> out;
  out.reserve(list->items.size());
  for (const nlohmann::json& pod : list->items) out.push_back(PodAnnotationsOf(pod));
  return out;
}

absl::Status K8sPodDirectory::PatchAnnotations(const std::string& ns, const std::string& name,
                                               const std::map<std::string, std::string>& set) {
  nlohmann::json ann = nlohmann::json::object();
  for (const auto& [k, v] : set) ann[k] = v;
  nlohmann::json patch = {{"metadata", {{"annotations", ann}}}};
  // A merge patch carries no resourceVersion precondition, so a 409 (an apiserver-internal
  // conflict) is safe to re-send as is. 429/5xx are retried by the transport.
  return k8s::RetryOnConflict([&] {
    return client_->Patch(k8s::resources::kPods, ns, name, k8s::PatchType::kMerge, patch).status();
  });
}

absl::StatusOr<std::shared_ptr<k8s::RestClient>> MakeApiClient(const std::string& kubeconfig) {
  absl::StatusOr<k8s::ClientConfig> cfg;
  if (!kubeconfig.empty()) {
    cfg = k8s::LoadKubeconfig(kubeconfig);
    if (!cfg.ok()) return cfg.status();
  } else {
    cfg = k8s::InClusterConfig();
    if (!cfg.ok()) {
      spdlog::info("no kubeconfig and not in a cluster: pod handshake disabled");
      return std::shared_ptr<k8s::RestClient>();
    }
  }
  absl::StatusOr<std::shared_ptr<k8s::Transport>> transport = k8s::NewTransport(*cfg);
  if (!transport.ok()) return transport.status();
  return std::make_shared<k8s::RestClient>(*transport, cfg->default_namespace);
}

}  // namespace neuron::deviceplugin
