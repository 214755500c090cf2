// File: tests/fakes/apiserver/registry.h
// The resource types the fake apiserver serves (built-ins + CRD-registered) and the discovery
// documents built from them (/api, /api/v1, /apis, /apis/<g>/<v>).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace neuron::fakes::apiserver {

using json = nlohmann::json;

// One served group/version/resource.
struct ResourceType {
  std::string group;  // "" for core
  std::string version;
  std::string plural;
  std::string singular;
  std::string kind;
  bool namespaced = true;
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
  bool has_status = false;    // status subresource
  bool has_binding = false;   // pods/binding
  bool has_eviction = false;  // pods/eviction (policy/v1 Eviction)
  std::string crd_name;       // non-empty when registered by a CRD
  nlohmann::json schema;      // the CRD version's openAPIV3Schema (null for built-ins)
  // Field selector labels beyond metadata.name / metadata.namespace.
  std::vector<std::string> field_labels;

  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
  // obj as this version serves it. Objects are stored once per group/resource; each served version
  // sees them with its own apiVersion. Simplification: no conversion between CRD versions.
  json Present(json obj) const;
  std::string ListKind() const { return kind + "List"; }
};

class Registry {
 public:
  Registry();  // the built-in types

  const ResourceType* Find(const std::string& group, const std::string& version,
                           const std::string& plural) const;
  // Whether any version of group/plural is served (used to keep objects across versions).
  std::vector<const ResourceType*> All() const;

  // Registers every served version of an apiextensions.k8s.io/v1 CustomResourceDefinition
  // (replacing an earlier registration by the same CRD). InvalidArgument on a malformed spec.
  absl::Status RegisterCrd(const json& crd);
  void UnregisterCrd(const std::string& crd_name);
  // Stops serving the built-in resources of group/version, as kube-apiserver's
  // --runtime-config=<group>/<version>=false does. Stored objects stay (other versions see them).
  void DisableGroupVersion(const std::string& group, const std::string& version);

  // Discovery documents. `server_address` is host:port for serverAddressByClientCIDRs.
  json ApiVersions(const std::string& server_address) const;
  json GroupList() const;
  // null when group/version is not served.
  json ResourceList(const std::string& group, const std::string& version) const;
  json Group(const std::string& group) const;  // APIGroup, or null
  // Minimal OpenAPI v3: the index (/openapi/v3) and, per group/version, a document holding only
  // the PATCH operations of each resource with their GVK and the fieldValidation parameter. That
  // is what kubectl reads to decide that the server validates fields itself (so it sends
  // fieldValidation=Strict and needs no schemas). Simplification: no component schemas.
  json OpenApiV3Index() const;
  json OpenApiV3(const std::string& group, const std::string& version) const;  // null if unknown

 private:
  std::vector<std::string> VersionsOf(const std::string& group) const;
  std::vector<ResourceType> types_;
};

// Fills status.conditions (NamesAccepted, Established) and status.acceptedNames of a CRD as the
// apiextensions controller would, immediately. Simplification: no name-conflict checks.
void MarkCrdEstablished(json& crd);

}  // namespace neuron::fakes::apiserver
