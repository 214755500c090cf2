// File: lib/deviceplugin/pod_cache.cc
#include "lib/deviceplugin/pod_cache.h"

#include <algorithm>
#include <tuple>

#include "lib/k8s/resource.h"

namespace neuron::deviceplugin {
namespace {

constexpr char kNeuronResourcePrefix[] = "aws.amazon.com/neuron";

// Only the aws.amazon.com/neuron* entries of a requests/limits map.
nlohmann::json NeuronQuantities(const nlohmann::json& quantities) {
  nlohmann::json out = nlohmann::json::object();
  if (!quantities.is_object()) return out;
  for (const auto& [k, v] : quantities.items()) {
    if (k.rfind(kNeuronResourcePrefix, 0) == 0) out[k] = v;
  }
  return out;
}

// The containers of `list` that ask for Neuron resources, each trimmed to name + resources.
nlohmann::json TrimContainers(const nlohmann::json& list) {
  nlohmann::json out = nlohmann::json::array();
  if (!list.is_array()) return out;
  for (const nlohmann::json& c : list) {
    if (!c.is_object()) continue;
    const nlohmann::json res = c.value("resources", nlohmann::json::object());
    if (!res.is_object()) continue;
    nlohmann::json trimmed = nlohmann::json::object();
    for (const char* field : {"requests", "limits"}) {
      auto it = res.find(field);
      if (it == res.end()) continue;
      nlohmann::json q = NeuronQuantities(*it);
      if (!q.empty()) trimmed[field] = std::move(q);
    }
    if (trimmed.empty()) continue;
    nlohmann::json name = "";
    if (auto it = c.find("name"); it != c.end() && it->is_string()) name = *it;
    out.push_back({{"name", std::move(name)}, {"resources", std::move(trimmed)}});
  }
  return out;
}

}  // namespace

void TrimPod(nlohmann::json& pod) {
  if (!pod.is_object()) return;
  nlohmann::json out = nlohmann::json::object();
  for (const char* field : {"apiVersion", "kind"}) {
    if (pod.contains(field)) out[field] = std::move(pod[field]);
  }
  auto meta = pod.find("metadata");
  if (meta != pod.end() && meta->is_object()) {
    nlohmann::json m = nlohmann::json::object();
    for (const char* field : {"name", "namespace", "uid", "resourceVersion", "annotations"}) {
      auto it = meta->find(field);
      if (it != meta->end()) m[field] = std::move(*it);
    }
    out["metadata"] = std::move(m);
  }
  auto spec = pod.find("spec");
  if (spec != pod.end() && spec->is_object()) {
    nlohmann::json s = nlohmann::json::object();
    if (auto it = spec->find("nodeName"); it != spec->end()) s["nodeName"] = std::move(*it);
    for (const char* field : {"containers", "initContainers"}) {
      auto it = spec->find(field);
      if (it == spec->end()) continue;
      nlohmann::json c = TrimContainers(*it);
      if (!c.empty()) s[field] = std::move(c);
    }
    out["spec"] = std::move(s);
  }
  pod = std::move(out);
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
  informer_->SetTransform(TrimPod);
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
