// File: lib/k8s/resource.h
// Which API resource a request is about, and the URL paths for it:
//   core:   /api/v1/[namespaces/{ns}/]{resource}[/{name}[/{subresource}]]
//   groups: /apis/{group}/{version}/[namespaces/{ns}/]{resource}[/{name}[/{subresource}]]
#pragma once

#include <string>

namespace neuron::k8s {

struct ResourceRef {
  std::string group{};     // "" = core
  std::string version{};   // "v1"
  std::string resource{};  // plural, lower case: "pods"
  bool namespaced = true;

  std::string GroupVersion() const;  // "v1" or "apps/v1"
  bool operator==(const ResourceRef&) const = default;
};

// Common resources.
namespace resources {
inline const ResourceRef kPods{"", "v1", "pods", true};
inline const ResourceRef kNodes{"", "v1", "nodes", false};
inline const ResourceRef kNamespaces{"", "v1", "namespaces", false};
inline const ResourceRef kConfigMaps{"", "v1", "configmaps", true};
inline const ResourceRef kEvents{"", "v1", "events", true};
inline const ResourceRef kServices{"", "v1", "services", true};
inline const ResourceRef kDaemonSets{"apps", "v1", "daemonsets", true};
inline const ResourceRef kDeployments{"apps", "v1", "deployments", true};
inline const ResourceRef kLeases{"coordination.k8s.io", "v1", "leases", true};
inline const ResourceRef kCRDs{"apiextensions.k8s.io", "v1", "customresourcedefinitions", false};
}  // namespace resources

// Path of the collection (name empty) or object; `ns` ignored for cluster-scoped resources.
std::string ResourcePath(const ResourceRef& ref, const std::string& ns,
                         const std::string& name = "", const std::string& subresource = "");

// Percent-escapes a query parameter value.
std::string QueryEscape(const std::string& s);

}  // namespace neuron::k8s
