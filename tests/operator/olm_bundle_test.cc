// File: tests/operator/olm_bundle_test.cc
// The OLM bundle and catalog made from the real install manifests (`kubectl kustomize
// deploy/operator`, plus the PrometheusRule), checked against the registry+v1 bundle format's
// rules: what manifests/ may hold, the annotations and the Dockerfile labels agreeing, a CSV
// whose install strategy is exactly the kustomize Deployment and RBAC, owned CRDs for every
// served version, examples the operator accepts, every image listed; and a catalog whose
// channel, bundle and install objects point at each other.
#include "lib/operator/olm_bundle.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "lib/operator/device_config.h"
#include "lib/operator/yaml_input.h"
#include "nlohmann/json.hpp"
#include "tests/operator/children_test_util.h"

namespace neuron::op {
namespace {

using childtest::ReadFile;
using childtest::SourcePath;
using nlohmann::json;

std::vector<json> Yaml(const std::string& text) {
  auto docs = ParseYamlDocuments(text);
  REQUIRE(docs.ok());
  return *docs;
}

// What `make bundle` feeds the generator.
std::vector<json> InstallManifests() {
  const std::string cmd = "kubectl kustomize " + SourcePath("deploy/operator") + " 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof(buf), p)) out.append(buf, n);
  REQUIRE(::pclose(p) == 0);
  std::vector<json> docs = Yaml(out);
  for (json& rule : Yaml(ReadFile("deploy/monitoring/prometheus-rule.yaml"))) {
    docs.push_back(rule);
  }
  return docs;
}

const json* FindKind(const std::vector<json>& docs, const std::string& kind) {
  for (const json& d : docs) {
    if (d.value("kind", "") == kind) return &d;
  }
  return nullptr;
}

std::map<std::string, std::string> ByPath(const std::vector<BundleFile>& files) {
  std::map<std::string, std::string> out;
  for (const BundleFile& f : files) REQUIRE(out.emplace(f.path, f.content).second);
  return out;
}

BundleOptions Options() {
  BundleOptions o;
  o.version = "0.2.0";
  o.replaces = "neuron-operator.v0.1.0";
  o.operator_image = "registry.example/neuron/neuron-operator:0.2.0";
  o.bundle_image = "registry.example/neuron/neuron-operator-bundle:v0.2.0";
  return o;
}

TEST_CASE("the bundle follows registry+v1 and installs what make deploy does", "[olm]") {
  const std::vector<json> manifests = InstallManifests();
  const auto files = MakeBundle(manifests, Options());
  REQUIRE(files.ok());
  const auto by_path = ByPath(*files);

  // Layout: manifests/ (one object per file, kinds OLM accepts), metadata/annotations.yaml.
  std::vector<json> objects;
  for (const auto& [path, text] : by_path) {
    if (path.rfind("manifests/", 0) != 0) continue;
    const auto docs = Yaml(text);
    REQUIRE(docs.size() == 1);
    const std::string kind = docs[0]["kind"];
    INFO(path);
    CHECK((kind == "ClusterServiceVersion" || kind == "CustomResourceDefinition" ||
           BundleSupportsKind(kind)));
    CHECK_FALSE(docs[0]["metadata"].contains("namespace"));  // OLM places them
    CHECK(text.size() < 1024 * 1024);                        // each lands in a ConfigMap
    objects.push_back(docs[0]);
  }
  CHECK(FindKind(objects, "PrometheusRule") != nullptr);
  CHECK(FindKind(objects, "NodeFeatureRule") == nullptr);  // the operator makes its own
  CHECK(FindKind(objects, "Namespace") == nullptr);

  // The CRDs are deploy's, as they are: DeviceConfig and the three cache CRDs.
  std::vector<json> crds;
  for (const json& o : objects) {
    if (o["kind"] == "CustomResourceDefinition") crds.push_back(o);
  }
  std::vector<json> deploy_crds = Yaml(ReadFile("deploy/operator/crd-neuroncaches.yaml"));
  deploy_crds.push_back(Yaml(ReadFile("deploy/operator/crd-deviceconfigs.yaml"))[0]);
  REQUIRE(crds.size() == deploy_crds.size());
  for (const json& want : deploy_crds) {
    CAPTURE(want["metadata"]["name"]);
    CHECK(std::count(crds.begin(), crds.end(), want) == 1);
  }

  // Annotations, and the same pairs as the bundle image's labels.
  const json annotations = Yaml(by_path.at("metadata/annotations.yaml"))[0]["annotations"];
  CHECK(annotations["operators.operatorframework.io.bundle.mediatype.v1"] == "registry+v1");
  CHECK(annotations["operators.operatorframework.io.bundle.manifests.v1"] == "manifests/");
  CHECK(annotations["operators.operatorframework.io.bundle.metadata.v1"] == "metadata/");
  CHECK(annotations["operators.operatorframework.io.bundle.package.v1"] == "neuron-operator");
  CHECK(annotations["operators.operatorframework.io.bundle.channels.v1"] == "stable");
  CHECK(annotations["operators.operatorframework.io.bundle.channel.default.v1"] == "stable");
  const std::string dockerfile = by_path.at("bundle.Dockerfile");
  for (const auto& [k, v] : annotations.items()) {
    CHECK(dockerfile.find("LABEL " + k + "=" + v.get<std::string>() + "\n") != std::string::npos);
  }
  CHECK(dockerfile.find("COPY manifests /manifests/") != std::string::npos);
  CHECK(dockerfile.find("COPY metadata /metadata/") != std::string::npos);

  // The CSV.
  const json* csv = FindKind(objects, "ClusterServiceVersion");
  REQUIRE(csv != nullptr);
  CHECK((*csv)["apiVersion"] == "operators.coreos.com/v1alpha1");
  CHECK((*csv)["metadata"]["name"] == "neuron-operator.v0.2.0");
  CHECK((*csv)["spec"]["version"] == "0.2.0");
  CHECK((*csv)["spec"]["replaces"] == "neuron-operator.v0.1.0");
  std::set<std::string> modes;
  for (const json& m : (*csv)["spec"]["installModes"]) {
    CHECK(modes.insert(m["type"]).second);
    CHECK(m["supported"].is_boolean());
  }
  CHECK(modes == std::set<std::string>{"OwnNamespace", "SingleNamespace", "MultiNamespace",
                                       "AllNamespaces"});

  // Owned: every served version of every CRD, with its kind.
  std::set<std::string> owned, served;
  for (const json& o : (*csv)["spec"]["customresourcedefinitions"]["owned"]) {
    owned.insert(o["name"].get<std::string>() + "/" + o["version"].get<std::string>() + "/" +
                 o["kind"].get<std::string>());
  }
  for (const json& crd : crds) {
    for (const json& v : crd["spec"]["versions"]) {
      if (v["served"] == true) {
        served.insert(crd["metadata"]["name"].get<std::string>() + "/" +
                      v["name"].get<std::string>() + "/" +
                      crd["spec"]["names"]["kind"].get<std::string>());
      }
    }
  }
  CHECK(owned == served);
  CHECK(owned.count(std::string("deviceconfigs.k8s.aws/v1beta1/") + kKind) == 1);

  // Install strategy: the kustomize Deployment with the chosen image, and its ClusterRole.
  const json& install = (*csv)["spec"]["install"];
  CHECK(install["strategy"] == "deployment");
  const json* deployment = FindKind(manifests, "Deployment");
  REQUIRE(install["spec"]["deployments"].size() == 1);
  json expected_spec = (*deployment)["spec"];
  expected_spec["template"]["spec"]["containers"][0]["image"] = Options().operator_image;
  CHECK(install["spec"]["deployments"][0]["name"] == "neuron-operator");
  CHECK(install["spec"]["deployments"][0]["spec"] == expected_spec);
  REQUIRE(install["spec"]["clusterPermissions"].size() == 1);
  const json& perm = install["spec"]["clusterPermissions"][0];
  CHECK(perm["serviceAccountName"] == expected_spec["template"]["spec"]["serviceAccountName"]);
  CHECK(perm["rules"] == (*FindKind(manifests, "ClusterRole"))["rules"]);
  CHECK((*csv)["metadata"]["annotations"]["containerImage"] == Options().operator_image);

  // Examples: the sample DeviceConfig, which the operator accepts.
  const json examples =
      json::parse((*csv)["metadata"]["annotations"]["alm-examples"].get<std::string>());
  REQUIRE(examples.size() == 1);
  auto dc = ParseDeviceConfig(examples[0]);
  REQUIRE(dc.ok());
  dc->ns = "aws-neuron-operator";
  CHECK(ValidateDeviceConfig(*dc).empty());

  // relatedImages: every image the operator runs or starts, each once.
  std::set<std::string> related;
  for (const json& r : (*csv)["spec"]["relatedImages"]) {
    CHECK(related.insert(r["image"]).second);
    CHECK(r["name"].get<std::string>().find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") ==
          std::string::npos);
  }
  CHECK(related.count(Options().operator_image) == 1);
  CHECK(related.count("neuron-node-agent:dev") == 1);  // --node-agent-image
  // The sample names no customSchedulerImage: the operator runs the API server's version.
  CHECK_FALSE(examples[0]["spec"].contains("customSchedulerImage"));
  for (const char* key : {"devicePluginImage", "schedulerExtensionImage", "nodeMetricsImage"}) {
    CHECK(related.count(examples[0]["spec"][key]) == 1);
  }
}

TEST_CASE("the catalog points at the bundle and install.yaml at the catalog", "[olm]") {
  const auto files = MakeCatalog(InstallManifests(), Options(), "registry.example/index:v0.2.0");
  REQUIRE(files.ok());
  const auto by_path = ByPath(*files);
  const auto catalog = Yaml(by_path.at("neuron-operator/catalog.yaml"));
  std::map<std::string, json> by_schema;
  for (const json& d : catalog) by_schema[d["schema"]] = d;
  REQUIRE(by_schema.size() == 3);
  CHECK(by_schema["olm.package"]["defaultChannel"] == by_schema["olm.channel"]["name"]);
  CHECK(by_schema["olm.channel"]["entries"][0]["name"] == by_schema["olm.bundle"]["name"]);
  CHECK(by_schema["olm.channel"]["entries"][0]["replaces"] == "neuron-operator.v0.1.0");
  CHECK(by_schema["olm.bundle"]["image"] == Options().bundle_image);
  bool package = false, gvk = false;
  for (const json& p : by_schema["olm.bundle"]["properties"]) {
    package |= p["type"] == "olm.package" && p["value"]["version"] == "0.2.0";
    gvk |= p["type"] == "olm.gvk" && p["value"]["group"] == "k8s.aws" &&
           p["value"]["kind"] == "DeviceConfig";
  }
  CHECK(package);
  CHECK(gvk);
  CHECK(by_path.at("catalog.Dockerfile").find("operators.operatorframework.io.index.configs.v1") !=
        std::string::npos);

  const auto install = Yaml(by_path.at("install.yaml"));
  const json* source = FindKind(install, "CatalogSource");
  const json* sub = FindKind(install, "Subscription");
  const json* group = FindKind(install, "OperatorGroup");
  REQUIRE((source && sub && group));
  CHECK((*source)["spec"]["image"] == "registry.example/index:v0.2.0");
  CHECK((*sub)["spec"]["source"] == (*source)["metadata"]["name"]);
  CHECK((*sub)["spec"]["sourceNamespace"] == (*source)["metadata"]["namespace"]);
  CHECK((*sub)["spec"]["channel"] == "stable");
  CHECK((*sub)["spec"]["name"] == "neuron-operator");
  // AllNamespaces, the one install mode: an OperatorGroup without targetNamespaces.
  CHECK_FALSE((*group)["spec"].contains("targetNamespaces"));
}

TEST_CASE("bad input gets an error that says what is wrong", "[olm]") {
  const std::vector<json> manifests = InstallManifests();
  BundleOptions o = Options();
  o.version = "v0.2";
  auto r = MakeBundle(manifests, o);
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("semantic") != std::string::npos);
  // The version is checked by a scanner, not std::regex (which recursed per character): every
  // form semver allows or refuses, and a 1 MB pre-release neither crashes nor hangs.
  for (const std::string& good : std::vector<std::string>{
           "0.2.0", "10.20.30", "1.0.0-rc.1", "1.0.0-a-b.c", "1.0.0+b.1", "1.0.0-rc.1+build-5",
           std::string("1.0.0-") + std::string(1 << 20, 'a')}) {
    o.version = good;
    CAPTURE(good.substr(0, 20));
    CHECK(MakeBundle(manifests, o).ok());
  }
  for (const std::string& bad : std::vector<std::string>{
           "1.0", "01.0.0", "1.00.0", "1.0.0-", "1.0.0+", "1.0.0-a+b+c", "1.0.0-a_b", "1.0.0 ",
           std::string("1.0.0-") + std::string(1 << 20, 'a') + "!"}) {
    o.version = bad;
    CAPTURE(bad.substr(0, 20));
    auto b = MakeBundle(manifests, o);
    REQUIRE_FALSE(b.ok());
    CHECK(std::string(b.status().message()).find("semantic") != std::string::npos);
  }

  std::vector<json> no_deployment;
  for (const json& m : manifests) {
    if (m["kind"] != "Deployment") no_deployment.push_back(m);
  }
  r = MakeBundle(no_deployment, Options());
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("no Deployment") != std::string::npos);

  std::vector<json> unbound;
  for (const json& m : manifests) {
    if (m["kind"] != "ClusterRoleBinding") unbound.push_back(m);
  }
  r = MakeBundle(unbound, Options());
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("service account neuron-operator") !=
        std::string::npos);

  std::vector<json> dangling = manifests;
  for (json& m : dangling) {
    if (m["kind"] == "ClusterRoleBinding") m["roleRef"]["name"] = "missing";
  }
  r = MakeBundle(dangling, Options());
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("ClusterRole missing") != std::string::npos);
}

}  // namespace
}  // namespace neuron::op
