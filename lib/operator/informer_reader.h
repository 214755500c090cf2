// File: lib/operator/informer_reader.h
// CachedReader over the controller's informers: the DeviceConfig informer and one informer per
// child kind (label app.kubernetes.io/managed-by, which every child carries). A kind without
// an informer, or whose informer has not listed yet, is not cached: the reconciler asks the API.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/k8s/informer.h"
#include "lib/operator/cached_reader.h"

namespace neuron::op {

class InformerReader final : public CachedReader {
 public:
  // Informers must outlive the reader; they are looked up by group and resource.
  void Add(const k8s::ResourceRef& ref, const k8s::Informer* informer);

  std::optional<k8s::ObjectPtr> Get(const k8s::ResourceRef& ref, const std::string& ns,
                                    const std::string& name) const override;
  std::optional<std::vector<k8s::ObjectPtr>> List(const k8s::ResourceRef& ref,
                                                  const std::string& ns, const std::string& label,
                                                  const std::string& value) const override;

 private:
  const k8s::Informer* Synced(const k8s::ResourceRef& ref) const;
  std::map<std::string, const k8s::Informer*> informers_;  // "<group>/<resource>"
};

}  // namespace neuron::op
