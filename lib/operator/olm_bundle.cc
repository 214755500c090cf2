// File: lib/operator/olm_bundle.cc
#include "lib/operator/olm_bundle.h"

#include <map>
#include <set>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/operator/render.h"

namespace neuron::op {
namespace {

using json = nlohmann::json;

constexpr char kMediaType[] = "registry+v1";
constexpr char kSource[] = "https://github.com/awslabs/neuron-k8s";

std::string Kind(const json& o) { return o.value("kind", ""); }
std::string Name(const json& o) { return o.value("metadata", json::object()).value("name", ""); }

absl::Status Invalid(const std::string& what) { return absl::InvalidArgumentError(what); }

// Semantic versioning's core and pre-release (OLM compares CSV versions as semver):
// (0|[1-9][0-9]*)(\.(0|[1-9][0-9]*)){2}(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?, scanned by hand
// (std::regex recurses per character).
bool IsSemver(std::string_view v) {
  size_t i = 0;
  for (int part = 0; part < 3; ++part) {
    if (part > 0 && (i >= v.size() || v[i++] != '.')) return false;
    const size_t start = i;
    while (i < v.size() && absl::ascii_isdigit(static_cast<unsigned char>(v[i]))) ++i;
    if (i == start || (v[start] == '0' && i - start > 1)) return false;
  }
  for (const char lead : {'-', '+'}) {
    if (i >= v.size() || v[i] != lead) continue;
    const size_t start = ++i;
    while (i < v.size() &&
           (absl::ascii_isalnum(static_cast<unsigned char>(v[i])) || v[i] == '.' || v[i] == '-')) {
      ++i;
    }
    if (i == start) return false;
  }
  return i == v.size();
}

std::string CsvName(const BundleOptions& o) { return o.package + ".v" + o.version; }

// The manifests sorted by what the bundle does with them.
struct Sorted {
  std::vector<json> crds, deployments, samples, extras;
  std::map<std::string, json> cluster_roles, roles;  // by name
  std::vector<json> cluster_bindings, bindings;
  std::string ns;  // the Deployments' namespace
};

absl::StatusOr<Sorted> Sort(const std::vector<json>& manifests) {
  Sorted s;
  std::set<std::string> owned_kinds;
  for (const json& m : manifests) {
    if (Kind(m) == "CustomResourceDefinition") {
      s.crds.push_back(m);
      owned_kinds.insert(MemberOrNull(m, {"spec", "names"}).value("kind", ""));
    }
  }
  for (const json& m : manifests) {
    const std::string kind = Kind(m);
    if (kind == "CustomResourceDefinition" || kind == "Namespace" || kind == "ServiceAccount") {
      continue;  // CRDs above; OLM makes the namespace and the service accounts
    } else if (kind == "Deployment") {
      s.deployments.push_back(m);
      s.ns = MemberOrNull(m, {"metadata"}).value("namespace", s.ns);
    } else if (kind == "ClusterRole") {
      s.cluster_roles[Name(m)] = m;
    } else if (kind == "Role") {
      s.roles[Name(m)] = m;
    } else if (kind == "ClusterRoleBinding") {
      s.cluster_bindings.push_back(m);
    } else if (kind == "RoleBinding") {
      s.bindings.push_back(m);
    } else if (owned_kinds.count(kind)) {
      s.samples.push_back(m);
    } else if (BundleSupportsKind(kind)) {
      s.extras.push_back(m);
    }
  }
  if (s.crds.empty()) return Invalid("no CustomResourceDefinition in the manifests");
  if (s.deployments.empty()) return Invalid("no Deployment in the manifests");
  return s;
}

// The service accounts a binding grants to (ServiceAccount subjects only).
std::vector<std::string> Accounts(const json& binding) {
  std::vector<std::string> out;
  for (const json& s : binding.value("subjects", json::array())) {
    if (s.value("kind", "") == "ServiceAccount") out.push_back(s.value("name", ""));
  }
  return out;
}

// CSV permissions: per service account, the rules of every role bound to it. Cluster-wide
// bindings become clusterPermissions; namespaced ones permissions (OLM makes them in the
// install namespace).
absl::StatusOr<json> Permissions(const Sorted& s, bool cluster) {
  std::map<std::string, json> rules;  // account -> rules
  for (const json& b : cluster ? s.cluster_bindings : s.bindings) {
    const std::string role_kind = MemberOrNull(b, {"roleRef"}).value("kind", "");
    const std::string role = MemberOrNull(b, {"roleRef"}).value("name", "");
    const auto& pool = role_kind == "ClusterRole" ? s.cluster_roles : s.roles;
    const auto it = pool.find(role);
    if (it == pool.end()) {
      return Invalid(absl::StrCat(Kind(b), " ", Name(b), " binds ", role_kind, " ", role,
                                  ", which the manifests do not hold"));
    }
    for (const std::string& sa : Accounts(b)) {
      json& r = rules.try_emplace(sa, json::array()).first->second;
      for (const json& rule : it->second.value("rules", json::array())) r.push_back(rule);
    }
  }
  json out = json::array();
  for (const auto& [sa, r] : rules) out.push_back({{"serviceAccountName", sa}, {"rules", r}});
  return out;
}

std::string ImageRepository(const std::string& image) {
  std::string repo = image.substr(0, image.find('@'));
  const size_t slash = repo.rfind('/');
  const size_t colon = repo.rfind(':');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    repo.resize(colon);
  }
  return repo;
}

// relatedImages names: lower-case letters, digits and '-'.
std::string ImageName(std::string s) {
  s = absl::AsciiStrToLower(s);
  for (char& c : s) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c))) c = '-';
  }
  return s;
}

void AddImage(json& related, std::set<std::string>& seen, const std::string& name,
              const std::string& image) {
  if (image.empty() || !seen.insert(image).second) return;
  related.push_back({{"name", ImageName(name)}, {"image", image}});
}

// Every image the operator runs or deploys: its containers, its --*-image flags, and the images
// the sample DeviceConfigs name (driversImage is a prefix KMM completes, not an image).
json RelatedImages(const std::vector<json>& deployments, const std::vector<json>& samples) {
  json related = json::array();
  std::set<std::string> seen;
  for (const json& d : deployments) {
    for (const json& c : MemberOrNull(d, {"spec", "template", "spec", "containers"})) {
      AddImage(related, seen, c.value("name", "operator"), c.value("image", ""));
      for (const json& a : c.value("args", json::array())) {
        const std::string arg = a.get<std::string>();
        const size_t eq = arg.find('=');
        if (absl::StartsWith(arg, "--") && eq != std::string::npos &&
            absl::EndsWith(arg.substr(0, eq), "-image")) {
          AddImage(related, seen, arg.substr(2, eq - 2), arg.substr(eq + 1));
        }
      }
    }
  }
  for (const json& sample : samples) {
    const json spec = sample.value("spec", json::object());
    for (const auto& [key, value] : spec.items()) {
      if (absl::EndsWith(key, "Image") && key != "driversImage" && value.is_string()) {
        AddImage(related, seen, key, value.get<std::string>());
      }
    }
  }
  return related;
}

json OwnedCrds(const std::vector<json>& crds) {
  json owned = json::array();
  for (const json& crd : crds) {
    const json& names = MemberOrNull(crd, {"spec", "names"});
    for (const json& v : MemberOrNull(crd, {"spec", "versions"})) {
      if (!v.value("served", false)) continue;
      owned.push_back({{"name", Name(crd)},
                       {"version", v.value("name", "")},
                       {"kind", names.value("kind", "")},
                       {"displayName", names.value("kind", "")},
                       {"description", v.value("schema", json::object())
                                           .value("openAPIV3Schema", json::object())
                                           .value("description", names.value("kind", ""))}});
    }
  }
  return owned;
}

json InstallModes() {
  // The operator watches DeviceConfigs in every namespace (and nodes cluster-wide), so it
  // installs only for all namespaces.
  json modes = json::array();
  for (const auto& [type, ok] :
       std::vector<std::pair<const char*, bool>>{{"OwnNamespace", false},
                                                 {"SingleNamespace", false},
                                                 {"MultiNamespace", false},
                                                 {"AllNamespaces", true}}) {
    modes.push_back({{"type", type}, {"supported", ok}});
  }
  return modes;
}

std::string StripNamespace(json m) {
  if (m.contains("metadata")) {
    m["metadata"].erase("namespace");
    m["metadata"].erase("creationTimestamp");
  }
  return ToYaml(m);
}

// Long on purpose: one document, written in the order the CSV's fields are read.
absl::StatusOr<json> Csv(const Sorted& s, const BundleOptions& o) {
  auto cluster_permissions = Permissions(s, /*cluster=*/true);
  if (!cluster_permissions.ok()) return cluster_permissions.status();
  auto permissions = Permissions(s, /*cluster=*/false);
  if (!permissions.ok()) return permissions.status();
  std::set<std::string> granted;
  for (const json* list : {&*cluster_permissions, &*permissions}) {
    for (const json& p : *list) granted.insert(StringMember(p, "serviceAccountName"));
  }

  json deployments = json::array();
  std::vector<json> installed;  // the Deployments as the CSV has them (operator image set)
  std::string operator_image;
  for (json d : s.deployments) {
    json& pod = d["spec"]["template"]["spec"];
    const std::string sa = pod.value("serviceAccountName", "default");
    if (!granted.count(sa)) {
      return Invalid(absl::StrCat("Deployment ", Name(d), " runs as service account ", sa,
                                  ", which no binding in the manifests grants anything"));
    }
    for (json& c : pod["containers"]) {
      const std::string image = c.value("image", "");
      if (ImageRepository(image) == "neuron-operator" ||
          absl::EndsWith(ImageRepository(image), "/neuron-operator")) {
        if (!o.operator_image.empty()) c["image"] = o.operator_image;
        operator_image = c["image"];
      }
    }
    deployments.push_back({{"name", Name(d)}, {"spec", d["spec"]}});
    installed.push_back(std::move(d));
  }
  std::vector<json> samples;
  for (const json& sample : s.samples) {
    json clean = sample;
    clean["metadata"].erase("namespace");
    samples.push_back(clean);
  }

  json csv = {
      {"apiVersion", "operators.coreos.com/v1alpha1"},
      {"kind", "ClusterServiceVersion"},
      {"metadata",
       {{"name", CsvName(o)},
        {"annotations",
         {{"alm-examples", json(samples).dump()},
          {"capabilities", "Seamless Upgrades"},
          {"categories", "AI/Machine Learning"},
          {"containerImage", operator_image},
          {"createdAt", ""},
          {"operators.operatorframework.io/suggested-namespace", s.ns},
          {"repository", kSource},
          {"description",
           "Runs AWS Inferentia and Trainium accelerators on Kubernetes: driver, device plugin, "
           "topology-aware scheduling and metrics from one DeviceConfig."}}}}},
      {"spec",
       {{"displayName", "AWS Neuron Operator"},
        {"description",
         "Turns Inf and Trn nodes into schedulable `aws.amazon.com/neuron` devices and "
         "`aws.amazon.com/neuroncore` cores. One DeviceConfig brings the Neuron kernel driver "
         "(through KMM, upgraded node by node), the device plugin, a second kube-scheduler with "
         "a topology-aware extender that places pods on connected devices and cores, the node "
         "agent's metrics and labels, and the NFD rule that finds Neuron nodes."},
        {"version", o.version},
        {"minKubeVersion", "1.28.0"},
        {"maturity", "alpha"},
        {"provider", {{"name", "AWS Neuron on Kubernetes"}, {"url", kSource}}},
        {"keywords", {"neuron", "inferentia", "trainium", "accelerator", "device-plugin"}},
        {"links", json::array({{{"name", "Source"}, {"url", kSource}}})},
        {"installModes", InstallModes()},
        {"customresourcedefinitions", {{"owned", OwnedCrds(s.crds)}}},
        {"install",
         {{"strategy", "deployment"},
          {"spec",
           {{"deployments", deployments},
            {"clusterPermissions", *cluster_permissions},
            {"permissions", *permissions}}}}},
        {"relatedImages", RelatedImages(installed, s.samples)}}}};
  // OLM reads an empty createdAt as unset; drop it rather than invent a time (reproducible).
  csv["metadata"]["annotations"].erase("createdAt");
  if (!o.replaces.empty()) csv["spec"]["replaces"] = o.replaces;
  return csv;
}

json Annotations(const BundleOptions& o) {
  return {{"operators.operatorframework.io.bundle.mediatype.v1", kMediaType},
          {"operators.operatorframework.io.bundle.manifests.v1", "manifests/"},
          {"operators.operatorframework.io.bundle.metadata.v1", "metadata/"},
          {"operators.operatorframework.io.bundle.package.v1", o.package},
          {"operators.operatorframework.io.bundle.channels.v1", o.channel},
          {"operators.operatorframework.io.bundle.channel.default.v1", o.channel}};
}

std::string FileName(const json& m) {
  const std::string api = m.value("apiVersion", "");
  const std::string group =
      api.find('/') == std::string::npos ? "core" : api.substr(0, api.find('/'));
  return absl::StrCat(Name(m), "_", group, "_", absl::AsciiStrToLower(Kind(m)), ".yaml");
}

absl::Status CheckOptions(const BundleOptions& o) {
  if (!IsSemver(o.version)) {
    return Invalid("version \"" + o.version + "\" is not semantic (MAJOR.MINOR.PATCH)");
  }
  if (o.package.empty() || o.channel.empty()) return Invalid("package and channel are required");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<BundleFile>> BundleFiles(const std::vector<json>& manifests,
                                                    const BundleOptions& opts) {
  if (absl::Status st = CheckOptions(opts); !st.ok()) return st;
  absl::StatusOr<Sorted> s = Sort(manifests);
  if (!s.ok()) return s.status();
  absl::StatusOr<json> csv = Csv(*s, opts);
  if (!csv.ok()) return csv.status();

  std::vector<BundleFile> files;
  files.push_back({"manifests/" + opts.package + ".clusterserviceversion.yaml", ToYaml(*csv)});
  for (const json& crd : s->crds) {
    const std::string group = MemberOrNull(crd, {"spec"}).value("group", "");
    const std::string plural = MemberOrNull(crd, {"spec", "names"}).value("plural", "");
    files.push_back({"manifests/" + group + "_" + plural + ".yaml", StripNamespace(crd)});
  }
  for (const json& extra : s->extras) {
    files.push_back({"manifests/" + FileName(extra), StripNamespace(extra)});
  }
  const json annotations = Annotations(opts);
  files.push_back({"metadata/annotations.yaml", ToYaml({{"annotations", annotations}})});
  std::string dockerfile =
      "# The bundle image: `make bundle-build` (docker, or an OCI layout).\nFROM scratch\n";
  for (const auto& [k, v] : annotations.items()) {
    absl::StrAppend(&dockerfile, "LABEL ", k, "=", v.get<std::string>(), "\n");
  }
  absl::StrAppend(&dockerfile, "COPY manifests /manifests/\nCOPY metadata /metadata/\n");
  files.push_back({"bundle.Dockerfile", dockerfile});
  return files;
}

absl::StatusOr<std::vector<BundleFile>> CatalogFiles(const std::vector<json>& manifests,
                                                     const BundleOptions& opts,
                                                     const std::string& index_image) {
  if (absl::Status st = CheckOptions(opts); !st.ok()) return st;
  if (opts.bundle_image.empty()) return Invalid("the bundle image is required");
  if (index_image.empty()) return Invalid("the index image is required");
  absl::StatusOr<Sorted> s = Sort(manifests);
  if (!s.ok()) return s.status();

  json entry = {{"name", CsvName(opts)}};
  if (!opts.replaces.empty()) entry["replaces"] = opts.replaces;
  json properties =
      json::array({{{"type", "olm.package"},
                    {"value", {{"packageName", opts.package}, {"version", opts.version}}}}});
  for (const json& owned : OwnedCrds(s->crds)) {
    const std::string name = StringMember(owned, "name");
    properties.push_back({{"type", "olm.gvk"},
                          {"value",
                           {{"group", name.substr(name.find('.') + 1)},
                            {"version", MemberOrNull(owned, "version")},
                            {"kind", MemberOrNull(owned, "kind")}}}});
  }
  std::string catalog;
  for (const json& doc :
       {json{{"schema", "olm.package"}, {"name", opts.package}, {"defaultChannel", opts.channel}},
        json{{"schema", "olm.channel"},
             {"package", opts.package},
             {"name", opts.channel},
             {"entries", json::array({entry})}},
        json{{"schema", "olm.bundle"},
             {"name", CsvName(opts)},
             {"package", opts.package},
             {"image", opts.bundle_image},
             {"properties", properties}}}) {
    catalog += "---\n" + ToYaml(doc);
  }

  const std::string dockerfile = absl::StrCat(
      "# The catalog (index) image: `make index`. opm serves the file-based catalog.\n"
      "FROM quay.io/operator-framework/opm:latest\n"
      "ENTRYPOINT [\"/bin/opm\"]\n"
      "CMD [\"serve\", \"/configs\", \"--cache-dir=/tmp/cache\"]\n"
      "ADD ",
      opts.package, " /configs/", opts.package,
      "\n"
      "RUN [\"/bin/opm\", \"serve\", \"/configs\", \"--cache-dir=/tmp/cache\", \"--cache-only\"]\n"
      "LABEL operators.operatorframework.io.index.configs.v1=/configs\n");

  // What a cluster admin applies: the catalog in the operator's namespace, an OperatorGroup for
  // all namespaces (the only install mode), and the Subscription.
  const std::string ns = s->ns.empty() ? "aws-neuron-operator" : s->ns;
  std::string install;
  for (const json& doc :
       {json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}},
        json{{"apiVersion", "operators.coreos.com/v1alpha1"},
             {"kind", "CatalogSource"},
             {"metadata", {{"name", opts.package + "-catalog"}, {"namespace", ns}}},
             {"spec",
              {{"sourceType", "grpc"},
               {"image", index_image},
               {"displayName", "AWS Neuron Operator"},
               {"publisher", "AWS Neuron on Kubernetes"}}}},
        json{{"apiVersion", "operators.coreos.com/v1"},
             {"kind", "OperatorGroup"},
             {"metadata", {{"name", opts.package}, {"namespace", ns}}},
             {"spec", json::object()}},
        json{{"apiVersion", "operators.coreos.com/v1alpha1"},
             {"kind", "Subscription"},
             {"metadata", {{"name", opts.package}, {"namespace", ns}}},
             {"spec",
              {{"channel", opts.channel},
               {"name", opts.package},
               {"source", opts.package + "-catalog"},
               {"sourceNamespace", ns},
               {"installPlanApproval", "Automatic"}}}}}) {
    install += "---\n" + ToYaml(doc);
  }
  return std::vector<BundleFile>{{opts.package + "/catalog.yaml", catalog},
                                 {"catalog.Dockerfile", dockerfile},
                                 {"install.yaml", install}};
}

// Manifests of any shape reach here (`neuron-operator bundle -f`): a field of the wrong type
// makes nlohmann::json throw, which becomes an error naming it rather than a crash.
template <typename F>
absl::StatusOr<std::vector<BundleFile>> Guarded(F make) {
  try {
    return make();
  } catch (const json::exception& e) {
    return Invalid(std::string("malformed manifests: ") + e.what());
  }
}

}  // namespace

absl::StatusOr<std::vector<BundleFile>> MakeBundle(const std::vector<json>& manifests,
                                                   const BundleOptions& opts) {
  return Guarded([&] { return BundleFiles(manifests, opts); });
}

absl::StatusOr<std::vector<BundleFile>> MakeCatalog(const std::vector<json>& manifests,
                                                    const BundleOptions& opts,
                                                    const std::string& index_image) {
  return Guarded([&] { return CatalogFiles(manifests, opts, index_image); });
}

bool BundleSupportsKind(const std::string& kind) {
  static const std::set<std::string> kKinds = {"ClusterRole",       "ClusterRoleBinding",
                                               "ConfigMap",         "ConsoleYAMLSample",
                                               "PrometheusRule",    "Role",
                                               "RoleBinding",       "Secret",
                                               "Service",           "ServiceAccount",
                                               "ServiceMonitor",    "PodDisruptionBudget",
                                               "PriorityClass",     "VerticalPodAutoscaler",
                                               "ConsoleQuickStart", "ConsoleCLIDownload",
                                               "ConsoleLink"};
  return kKinds.count(kind) > 0;
}

}  // namespace neuron::op
