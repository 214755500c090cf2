// File: lib/deviceplugin/pod_cache.cc
#include "lib/deviceplugin/pod_cache.h"

#include <algorithm>
#include <tuple>

#include "lib/assignment/annotations.h"
#include "lib/deviceplugin/ultraserver_env.h"
#include "lib/k8s/object_fields.h"
#include "lib/k8s/resource.h"

namespace neuron::deviceplugin {
const JsonKeep& PodCacheFields() {
  static const JsonKeep* keep = new JsonKeep(JsonKeep::Of({k8s::IdentityMetadata(
      {{"annotations", JsonKeep::Of({{assignment::kAnnotationIds},
                                     {assignment::kAnnotationType},
                                     {assignment::kAnnotationAllocated},
                                     {assignment::kAnnotationAllocTime},
                                     // An UltraServer group pod's placement (ultraserver_env.h).
                                     {kUsSetSizeAnnotation},
                                     {kUsServerIdAnnotation},
                                     {kUsNodeIdAnnotation},
                                     {kUsModeAnnotation},
                                     {kUsRankAnnotation},
                                     {kUsRank0HostAnnotation}})}})}));
  return *keep;
}

PodAnnotations PodAnnotationsOf(const nlohmann::json& pod) {
  PodAnnotations p;
  if (!pod.is_object()) return p;
  const nlohmann::json meta = pod.value("metadata", nlohmann::json::object());
  if (!meta.is_object()) return p;
  if (auto it = meta.find("namespace"); it != meta.end() && it->is_string()) p.ns = *it;
  if (auto it = meta.find("name"); it != meta.end() && it->is_string()) p.name = *it;
  auto ann = meta.find("annotations");
  if (ann != meta.end() && ann->is_object()) {
    for (const auto& [k, v] : ann->items()) {
      if (v.is_string()) p.annotations[k] = v.get<std::string>();
    }
  }
  return p;
}

CachedPodDirectory::CachedPodDirectory(std::shared_ptr<k8s::RestClient> client,
                                       const std::string& node_name, k8s::ReflectorOptions opts)
    : client_(std::move(client)), direct_(client_, node_name) {
  opts.field_selector = "spec.nodeName=" + node_name;
  informer_ = std::make_unique<k8s::Informer>(*client_, k8s::resources::kPods, "", opts);
  informer_->SetFields(PodCacheFields());
}

CachedPodDirectory::~CachedPodDirectory() { Stop(); }

void CachedPodDirectory::Start() { informer_->Start(); }
void CachedPodDirectory::Stop() { informer_->Stop(); }
bool CachedPodDirectory::HasSynced() const { return informer_->HasSynced(); }
bool CachedPodDirectory::WaitForSync(absl::Duration timeout) const {
  return informer_->WaitForSync(timeout);
}

absl::StatusOr<std::vector<PodAnnotations>> CachedPodDirectory::ListNodePods() {
  if (!informer_->HasSynced()) return direct_.ListNodePods();
  std::vector<PodAnnotations> out;
  for (const k8s::ObjectPtr& pod : informer_->store().List()) out.push_back(PodAnnotationsOf(*pod));
  // Deterministic order (the store is a hash map), as a list from the API would be.
  std::sort(out.begin(), out.end(), [](const PodAnnotations& a, const PodAnnotations& b) {
    return std::tie(a.ns, a.name) < std::tie(b.ns, b.name);
  });
  return out;
}

absl::Status CachedPodDirectory::PatchAnnotations(const std::string& ns, const std::string& name,
                                                  const std::map<std::string, std::string>& set) {
  return direct_.PatchAnnotations(ns, name, set);
}

}  // namespace neuron::deviceplugin
