// File: lib/k8s/discovery.h
// API discovery: is an optional API served (KMM Module, NFD NodeFeatureRule in nfd.k8s-sigs.io
// or nfd.openshift.io, ServiceMonitor, PrometheusRule), and is a resource namespaced.
// Answers are cached per group/version until Invalidate().
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "lib/k8s/resource.h"
#include "lib/k8s/rest_client.h"

namespace neuron::k8s {

struct ApiResourceInfo {
  std::string name{};  // plural
  std::string kind{};
  bool namespaced = false;
  std::vector<std::string> verbs{};
};

class Discovery {
 public:
  explicit Discovery(RestClient& client) : client_(client) {}

  // The resources served at group/version; empty vector (not an error) if the group/version is
  // not served (404).
  absl::StatusOr<std::vector<ApiResourceInfo>> Resources(const std::string& group,
                                                         const std::string& version);
  // The ResourceRef (with `namespaced` from the server) if served, nullopt otherwise.
  absl::StatusOr<std::optional<ResourceRef>> Find(const std::string& group,
                                                  const std::string& version,
                                                  const std::string& resource);
  absl::StatusOr<bool> IsServed(const std::string& group, const std::string& version,
                                const std::string& resource);
  // Versions of `group` the server serves, preferred first (from /apis); empty if none.
  absl::StatusOr<std::vector<std::string>> GroupVersions(const std::string& group);
  void Invalidate();

 private:
  RestClient& client_;
  absl::Mutex mu_;
  std::map<std::string, std::vector<ApiResourceInfo>> cache_ ABSL_GUARDED_BY(mu_);
};

}  // namespace neuron::k8s
