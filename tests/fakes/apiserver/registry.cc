// File: tests/fakes/apiserver/registry.cc
#include "tests/fakes/apiserver/registry.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "tests/fakes/apiserver/api_status.h"

namespace neuron::fakes::apiserver {
namespace {

ResourceType Make(std::string group, std::string version, std::string plural, std::string singular,
                  std::string kind, bool namespaced, std::vector<std::string> short_names,
                  bool has_status = false, std::vector<std::string> field_labels = {}) {
  ResourceType t;
  t.group = std::move(group);
  t.version = std::move(version);
  t.plural = std::move(plural);
  t.singular = std::move(singular);
  t.kind = std::move(kind);
  t.namespaced = namespaced;
  t.short_names = std::move(short_names);
  t.has_status = has_status;
  t.field_labels = std::move(field_labels);
  return t;
}

const std::vector<std::string> kVerbs = {"create", "delete", "deletecollection", "get",
                                         "list",   "patch",  "update",           "watch"};

}  // namespace

json ResourceType::Present(json obj) const {
  obj["apiVersion"] = ApiVersion();
  obj["kind"] = kind;
  return obj;
}

Registry::Registry() {
  // Field labels are the ones upstream registers per type (pkg/registry/*/strategy.go).
  types_.push_back(Make("", "v1", "namespaces", "namespace", "Namespace", false, {"ns"}, true,
                        {"status.phase"}));
  types_.push_back(
      Make("", "v1", "nodes", "node", "Node", false, {"no"}, true, {"spec.unschedulable"}));
  ResourceType pods =
      Make("", "v1", "pods", "pod", "Pod", true, {"po"}, true,
           {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
            "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"});
  pods.has_binding = true;
  pods.has_eviction = true;
  pods.categories = {"all"};
  types_.push_back(pods);
  types_.push_back(Make("", "v1", "configmaps", "configmap", "ConfigMap", true, {"cm"}));
  types_.push_back(Make("", "v1", "services", "service", "Service", true, {"svc"}, true));
  types_.back().categories = {"all"};
  types_.push_back(
      Make("", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", true, {"sa"}));
  types_.push_back(
      Make("", "v1", "events", "event", "Event", true, {"ev"}, false,
           {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
            "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
            "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"}));
  types_.push_back(Make("", "v1", "secrets", "secret", "Secret", true, {}, false, {"type"}));
  types_.push_back(Make("apps", "v1", "daemonsets", "daemonset", "DaemonSet", true, {"ds"}, true));
  types_.back().categories = {"all"};
  types_.push_back(
      Make("apps", "v1", "deployments", "deployment", "Deployment", true, {"deploy"}, true));
  types_.back().categories = {"all"};
  // ReplicaSets and StatefulSets are stored only (no controllers); the disruption controller
  // emulation reads their spec.replicas as the scale of the pods they control.
  types_.push_back(
      Make("apps", "v1", "replicasets", "replicaset", "ReplicaSet", true, {"rs"}, true));
  types_.back().categories = {"all"};
  types_.push_back(
      Make("apps", "v1", "statefulsets", "statefulset", "StatefulSet", true, {"sts"}, true));
  types_.back().categories = {"all"};
  types_.push_back(Make("coordination.k8s.io", "v1", "leases", "lease", "Lease", true, {}));
  // PodDisruptionBudgets: their status is kept by the disruption controller emulation
  // (controllers.cc) and consulted by pods/eviction (api_evict.cc).
  types_.push_back(Make("policy", "v1", "poddisruptionbudgets", "poddisruptionbudget",
                        "PodDisruptionBudget", true, {"pdb"}, true));
  types_.push_back(Make("events.k8s.io", "v1", "events", "event", "Event", true, {"ev"}));
  // RBAC objects are stored and served; Simplification: nothing is authorized by them (the
  // fake answers every request), and escalation checks on create are not made.
  types_.push_back(Make("rbac.authorization.k8s.io", "v1", "roles", "role", "Role", true, {}));
  types_.push_back(Make("rbac.authorization.k8s.io", "v1", "rolebindings", "rolebinding",
                        "RoleBinding", true, {}));
  types_.push_back(Make("rbac.authorization.k8s.io", "v1", "clusterroles", "clusterrole",
                        "ClusterRole", false, {}));
  types_.push_back(Make("rbac.authorization.k8s.io", "v1", "clusterrolebindings",
                        "clusterrolebinding", "ClusterRoleBinding", false, {}));
  // CSIDriver objects are stored and served; Simplification: no kubelet reads them.
  types_.push_back(Make("storage.k8s.io", "v1", "csidrivers", "csidriver", "CSIDriver", false, {}));
  types_.push_back(Make("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                        "customresourcedefinition", "CustomResourceDefinition", false,
                        {"crd", "crds"}, true));
  // DRA (resource.k8s.io). v1 is registered first so that it is the preferred version. Upstream
  // 1.34 serves v1 by default and v1beta1 only with --runtime-config=resource.k8s.io/v1beta1=true
  // (pkg/controlplane/instance.go); the fake serves both, and DisableGroupVersion() drops one.
  // Simplification: no conversion between the versions: objects are stored as written and read
  // back with the reader's apiVersion only, so a v1beta1 ResourceSlice's device keeps its fields
  // under "basic" when read at v1 (v1 has them on the device itself) and a v1beta1 request keeps
  // deviceClassName beside its name (v1 nests it under "exactly").
  for (const char* version : {"v1", "v1beta1"}) {
    // Field labels: pkg/apis/resource/<version>/conversion.go, ResourceSlice only.
    types_.push_back(Make("resource.k8s.io", version, "resourceslices", "resourceslice",
                          "ResourceSlice", false, {}, false, {"spec.nodeName", "spec.driver"}));
    types_.push_back(Make("resource.k8s.io", version, "resourceclaims", "resourceclaim",
                          "ResourceClaim", true, {}, true));
    types_.push_back(Make("resource.k8s.io", version, "resourceclaimtemplates",
                          "resourceclaimtemplate", "ResourceClaimTemplate", true, {}));
    types_.push_back(
        Make("resource.k8s.io", version, "deviceclasses", "deviceclass", "DeviceClass", false, {}));
  }
}

void Registry::DisableGroupVersion(const std::string& group, const std::string& version) {
  std::erase_if(types_, [&](const ResourceType& t) {
    return t.crd_name.empty() && t.group == group && t.version == version;
  });
}

const ResourceType* Registry::Find(const std::string& group, const std::string& version,
                                   const std::string& plural) const {
  for (const auto& t : types_) {
    if (t.group == group && t.version == version && t.plural == plural) return &t;
  }
  return nullptr;
}

std::vector<const ResourceType*> Registry::All() const {
  std::vector<const ResourceType*> out;
  for (const auto& t : types_) out.push_back(&t);
  return out;
}

absl::Status Registry::RegisterCrd(const json& crd) {
  const json& spec = crd.value("spec", json::object());
  const std::string name = crd.value("/metadata/name"_json_pointer, std::string());
  const json names = spec.value("names", json::object());
  ResourceType base;
  base.group = spec.value("group", std::string());
  base.plural = names.value("plural", std::string());
  base.kind = names.value("kind", std::string());
  base.singular = names.value("singular", std::string());
  if (base.singular.empty()) {
    base.singular = base.kind;
    std::transform(base.singular.begin(), base.singular.end(), base.singular.begin(), ::tolower);
  }
  if (base.group.empty() || base.plural.empty() || base.kind.empty()) {
    return absl::InvalidArgumentError(
        "spec.group, spec.names.plural and spec.names.kind are required");
  }
  if (name != base.plural + "." + base.group) {
    return absl::InvalidArgumentError(
        absl::StrCat("metadata.name: Invalid value: \"", name,
                     "\": must be spec.names.plural+\".\"+spec.group"));
  }
  base.namespaced = spec.value("scope", std::string("Namespaced")) != "Cluster";
  for (const auto& s : names.value("shortNames", json::array())) {
    if (s.is_string()) base.short_names.push_back(s.get<std::string>());
  }
  for (const auto& s : names.value("categories", json::array())) {
    if (s.is_string()) base.categories.push_back(s.get<std::string>());
  }
  base.crd_name = name;
  std::vector<ResourceType> add;
  for (const auto& v : spec.value("versions", json::array())) {
    if (!v.is_object() || !v.value("served", false)) continue;
    ResourceType t = base;
    t.version = v.value("name", std::string());
    if (t.version.empty()) return absl::InvalidArgumentError("spec.versions[].name is required");
    const json& sub = v.value("subresources", json::object());
    t.has_status = sub.is_object() && sub.contains("status");
    t.schema = v.value("/schema/openAPIV3Schema"_json_pointer, json());
    add.push_back(std::move(t));
  }
  UnregisterCrd(name);
  for (auto& t : add) types_.push_back(std::move(t));
  return absl::OkStatus();
}

void Registry::UnregisterCrd(const std::string& crd_name) {
  std::erase_if(types_, [&](const ResourceType& t) { return t.crd_name == crd_name; });
}

std::vector<std::string> Registry::VersionsOf(const std::string& group) const {
  std::vector<std::string> out;
  for (const auto& t : types_) {
    if (t.group == group && std::find(out.begin(), out.end(), t.version) == out.end()) {
      out.push_back(t.version);
    }
  }
  return out;
}

json Registry::ApiVersions(const std::string& server_address) const {
  return {{"kind", "APIVersions"},
          {"versions", {"v1"}},
          {"serverAddressByClientCIDRs",
           {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}}}}};
}

json Registry::Group(const std::string& group) const {
  // Simplification: the preferred version is the first registered one, not the highest by
  // Kubernetes version priority.
  const auto versions = VersionsOf(group);
  if (group.empty() || versions.empty()) return nullptr;
  json g = {{"name", group}, {"versions", json::array()}};
  for (const auto& v : versions) {
    g["versions"].push_back({{"groupVersion", group + "/" + v}, {"version", v}});
  }
  g["preferredVersion"] = g["versions"][0];
  return g;
}

json Registry::GroupList() const {
  json out = {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", json::array()}};
  std::vector<std::string> seen;
  for (const auto& t : types_) {
    if (t.group.empty() || std::find(seen.begin(), seen.end(), t.group) != seen.end()) continue;
    seen.push_back(t.group);
    out["groups"].push_back(Group(t.group));
  }
  return out;
}

json Registry::ResourceList(const std::string& group, const std::string& version) const {
  json resources = json::array();
  for (const auto& t : types_) {
    if (t.group != group || t.version != version) continue;
    json r = {{"name", t.plural},
              {"singularName", t.singular},
              {"namespaced", t.namespaced},
              {"kind", t.kind},
              {"verbs", kVerbs}};
    if (!t.short_names.empty()) r["shortNames"] = t.short_names;
    if (!t.categories.empty()) r["categories"] = t.categories;
    resources.push_back(r);
    if (t.has_status) {
      resources.push_back({{"name", t.plural + "/status"},
                           {"singularName", ""},
                           {"namespaced", t.namespaced},
                           {"kind", t.kind},
                           {"verbs", {"get", "patch", "update"}}});
    }
    if (t.has_binding) {
      resources.push_back({{"name", t.plural + "/binding"},
                           {"singularName", ""},
                           {"namespaced", t.namespaced},
                           {"kind", "Binding"},
                           {"verbs", {"create"}}});
    }
    if (t.has_eviction) {
      // kubectl drain looks for exactly this entry (with group and version) before it evicts.
      resources.push_back({{"name", t.plural + "/eviction"},
                           {"singularName", ""},
                           {"namespaced", t.namespaced},
                           {"group", "policy"},
                           {"version", "v1"},
                           {"kind", "Eviction"},
                           {"verbs", {"create"}}});
    }
  }
  if (resources.empty()) return nullptr;
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", group.empty() ? version : group + "/" + version},
          {"resources", resources}};
}

json Registry::OpenApiV3(const std::string& group, const std::string& version) const {
  json paths = json::object();
  for (const auto& t : types_) {
    if (t.group != group || t.version != version) continue;
    const std::string base = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
    const std::string item =
        base + (t.namespaced ? "/namespaces/{namespace}/" : "/") + t.plural + "/{name}";
    json params = json::array();
    for (const char* q : {"dryRun", "fieldManager", "fieldValidation", "force"}) {
      params.push_back({{"name", q}, {"in", "query"}, {"schema", {{"type", "string"}}}});
    }
    paths[item] = {{"patch",
                    {{"x-kubernetes-action", "patch"},
                     {"x-kubernetes-group-version-kind",
                      {{"group", group}, {"version", version}, {"kind", t.kind}}},
                     {"parameters", params},
                     {"responses", {{"200", {{"description", "OK"}}}}}}}};
  }
  if (paths.empty()) return nullptr;
  return {{"openapi", "3.0.0"},
          {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0"}}},
          {"paths", paths},
          {"components", {{"schemas", json::object()}}}};
}

json Registry::OpenApiV3Index() const {
  json paths = json::object();
  for (const auto& t : types_) {
    const std::string gv =
        t.group.empty() ? "api/" + t.version : "apis/" + t.group + "/" + t.version;
    const std::string hash =
        std::to_string(std::hash<std::string>()(OpenApiV3(t.group, t.version).dump()));
    paths[gv] = {{"serverRelativeURL", "/openapi/v3/" + gv + "?hash=" + hash}};
  }
  return {{"paths", paths}};
}

void MarkCrdEstablished(json& crd) {
  const std::string now = NowRfc3339();
  json accepted = crd.value("/spec/names"_json_pointer, json::object());
  if (!accepted.contains("listKind") && accepted.contains("kind") && accepted["kind"].is_string()) {
    accepted["listKind"] = accepted["kind"].get<std::string>() + "List";
  }
  json stored = json::array();
  for (const auto& v : crd.value("/spec/versions"_json_pointer, json::array())) {
    if (v.is_object() && v.value("storage", false)) stored.push_back(v.value("name", ""));
  }
  crd["status"] = {{"acceptedNames", accepted},
                   {"storedVersions", stored},
                   {"conditions",
                    {{{"type", "NamesAccepted"},
                      {"status", "True"},
                      {"reason", "NoConflicts"},
                      {"message", "no conflicts found"},
                      {"lastTransitionTime", now}},
                     {{"type", "Established"},
                      {"status", "True"},
                      {"reason", "InitialNamesAccepted"},
                      {"message", "the initial names have been accepted"},
                      {"lastTransitionTime", now}}}}};
}

}  // namespace neuron::fakes::apiserver
