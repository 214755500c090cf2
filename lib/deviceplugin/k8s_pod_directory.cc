// File: lib/deviceplugin/k8s_pod_directory.cc
#include "lib/deviceplugin/k8s_pod_directory.h"

#include <spdlog/spdlog.h>

#include "lib/deviceplugin/pod_cache.h"
#include "lib/k8s/resource.h"

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

}  // namespace neuron::deviceplugin
