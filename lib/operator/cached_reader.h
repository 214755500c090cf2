// File: lib/operator/cached_reader.h
// The reads a reconcile pass may take from the controller's informer caches instead of the API
// server: the DeviceConfigs, and the children of every kind the controller watches. A pass that
// finds everything as it should be then makes no request at all; kinds without a synced cache
// are read from the API as before.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/k8s/resource.h"
#include "lib/k8s/store.h"

namespace neuron::op {

class CachedReader {
 public:
  virtual ~CachedReader() = default;
  // The cached object (nullptr: the cache holds none); nullopt when `ref` is not cached or its
  // cache has not listed yet: ask the API server.
  virtual std::optional<k8s::ObjectPtr> Get(const k8s::ResourceRef& ref, const std::string& ns,
                                            const std::string& name) const = 0;
  // Cached objects of `ref` in `ns` ("" = every namespace) labelled `label`=`value`; nullopt as
  // above. `label` empty = all.
  virtual std::optional<std::vector<k8s::ObjectPtr>> List(const k8s::ResourceRef& ref,
                                                          const std::string& ns,
                                                          const std::string& label,
                                                          const std::string& value) const = 0;
};

}  // namespace neuron::op
