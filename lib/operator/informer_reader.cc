// File: lib/operator/informer_reader.cc
#include "lib/operator/informer_reader.h"

#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/k8s/object_view.h"

namespace neuron::op {
namespace {

std::string KindKey(const k8s::ResourceRef& ref) {
  return absl::StrCat(ref.group, "/", ref.resource);
}

}  // namespace

void InformerReader::Add(const k8s::ResourceRef& ref, const k8s::Informer* informer) {
  informers_[KindKey(ref)] = informer;
}

const k8s::Informer* InformerReader::Synced(const k8s::ResourceRef& ref) const {
  auto it = informers_.find(KindKey(ref));
  if (it == informers_.end() || it->second == nullptr || !it->second->HasSynced()) return nullptr;
  return it->second;
}

std::optional<k8s::ObjectPtr> InformerReader::Get(const k8s::ResourceRef& ref,
                                                  const std::string& ns,
                                                  const std::string& name) const {
  const k8s::Informer* inf = Synced(ref);
  if (inf == nullptr) return std::nullopt;
  // The store's keys are k8s::ObjectKey: "ns/name", or "name" when cluster-scoped.
  return inf->store().Get(ns.empty() ? name : absl::StrCat(ns, "/", name));
}

std::optional<std::vector<k8s::ObjectPtr>> InformerReader::List(const k8s::ResourceRef& ref,
                                                                const std::string& ns,
                                                                const std::string& label,
                                                                const std::string& value) const {
  const k8s::Informer* inf = Synced(ref);
  if (inf == nullptr) return std::nullopt;
  std::vector<k8s::ObjectPtr> out;
  for (k8s::ObjectPtr& o : inf->store().List()) {
    const k8s::ObjectView view(*o);
    if (!ns.empty() && view.namespace_() != ns) continue;
    if (!label.empty() && view.label(label) != value) continue;
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace neuron::op
