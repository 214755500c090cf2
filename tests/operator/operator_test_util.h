// File: tests/operator/operator_test_util.h
// The operator against the in-process fake kube-apiserver: CRDs installed from the repository's
// own files (deploy/operator/ for DeviceConfig, testdata/crds/ for the optional APIs), the
// operator namespace, Neuron nodes, and helpers to drive child status as controllers would.
#pragma once

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "lib/k8s/resource.h"
#include "lib/k8s/rest_client.h"
#include "lib/k8s/transport.h"
#include "lib/operator/reconciler.h"
#include "lib/operator/yaml_input.h"
#include "tests/fakes/apiserver/fake_apiserver.h"

namespace neuron::op::testutil {

using nlohmann::json;

// The sample DeviceConfig most tests start from (aws-neuron-operator/neuron), and the labels KMM
// puts on a node for its Module.
constexpr char kSample[] = "deploy/operator/samples/deviceconfig-v1beta1.yaml";
constexpr char kVersionLabel[] = "kmm.node.kubernetes.io/version-module.aws-neuron-operator.neuron";
constexpr char kReadyLabel[] = "kmm.node.kubernetes.io/aws-neuron-operator.neuron.version.ready";

inline std::string SourcePath(const std::string& rel) {
  const char* root = std::getenv("NEURON_SOURCE_DIR");
  return std::string(root != nullptr ? root : ".") + "/" + rel;
}

inline std::vector<json> LoadYaml(const std::string& rel) {
  std::ifstream in(SourcePath(rel));
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  auto docs = ParseYamlDocuments(text.str());
  REQUIRE(docs.ok());
  return *docs;
}

inline constexpr char kNs[] = "aws-neuron-operator";
inline const k8s::ResourceRef kModules{"kmm.sigs.x-k8s.io", "v1beta1", "modules", true};

struct Cluster {
  // Optional APIs to install: "kmm", "nfd", "nfd-openshift", "servicemonitor".
  explicit Cluster(const std::vector<std::string>& apis = {"kmm", "nfd"}) {
    REQUIRE(server.Start().ok());
    k8s::ClientConfig cfg;
    cfg.server = server.url();
    k8s::RetryOptions retry;
    retry.max_attempts = 1;  // tests see every injected error
    auto transport = k8s::NewTransport(cfg, {}, retry);
    REQUIRE(transport.ok());
    client = std::make_shared<k8s::RestClient>(*transport);
    InstallCrd("deploy/operator/crd-deviceconfigs.yaml");
    for (const std::string& a : apis) {
      if (a == "kmm") InstallCrd("tests/operator/testdata/crds/kmm-modules.yaml");
      if (a == "nfd") InstallCrd("tests/operator/testdata/crds/nfd-k8s-sigs.yaml");
      if (a == "nfd-openshift") InstallCrd("tests/operator/testdata/crds/nfd-openshift.yaml");
      if (a == "servicemonitor") InstallCrd("tests/operator/testdata/crds/servicemonitors.yaml");
    }
    REQUIRE(
        client
            ->Create(k8s::resources::kNamespaces, "",
                     {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kNs}}}})
            .ok());
  }

  void InstallCrd(const std::string& rel) {
    for (const json& crd : LoadYaml(rel)) {
      auto r = client->Create(k8s::resources::kCRDs, "", crd);
      CAPTURE(rel, r.status().ToString());
      REQUIRE(r.ok());
    }
  }

  void AddNode(const std::string& name, const json& labels) {
    REQUIRE(client
                ->Create(k8s::resources::kNodes, "",
                         {{"apiVersion", "v1"},
                          {"kind", "Node"},
                          {"metadata", {{"name", name}, {"labels", labels}}}})
                .ok());
  }

  // The DeviceConfig of a sample file, created through the given served version.
  json CreateSample(const std::string& rel, const std::string& name = "") {
    json dc = LoadYaml(rel).front();
    if (!name.empty()) dc["metadata"]["name"] = name;
    dc["metadata"]["namespace"] = kNs;
    const std::string version = dc["apiVersion"].get<std::string>().substr(8);  // "k8s.aws/"
    auto r = client->Create({"k8s.aws", version, "deviceconfigs", true}, kNs, dc);
    CAPTURE(r.status().ToString());
    REQUIRE(r.ok());
    return *r;
  }

  json GetDc(const std::string& name) {
    return server.Get("/apis/k8s.aws/v1beta1/namespaces/" + std::string(kNs) + "/deviceconfigs/" +
                      name);
  }

  // Writes `status` into a child as its controller would (the /status path).
  void SetStatus(const std::string& path, const json& status) {
    json obj = server.Get(path);
    REQUIRE(!obj.is_null());
    obj["status"] = status;
    REQUIRE(server.Put(path, obj).ok());
  }

  fakes::FakeApiServer server;
  std::shared_ptr<k8s::RestClient> client;
};

// Nodes listed straight from the API (the controller's cache holds a subset of the same).
inline NodesFn ListNodes(k8s::RestClient& client) {
  return [&client]() -> absl::StatusOr<std::vector<json>> {
    auto list = client.ListAll(k8s::resources::kNodes, "");
    if (!list.ok()) return list.status();
    return std::move(list->items);
  };
}

inline std::string CondStatus(const json& dc, const std::string& type) {
  for (const json& c : dc["status"].value("conditions", json::array())) {
    if (c["type"] == type) return c["status"];
  }
  return "";
}

inline std::string CondReason(const json& dc, const std::string& type) {
  for (const json& c : dc["status"].value("conditions", json::array())) {
    if (c["type"] == type) return c["reason"];
  }
  return "";
}

inline std::string CondMessage(const json& dc, const std::string& type) {
  for (const json& c : dc["status"].value("conditions", json::array())) {
    if (c["type"] == type) return c["message"];
  }
  return "";
}

}  // namespace neuron::op::testutil
