// File: tests/operator/children_test_util.h
// DeviceConfigs and child sets for the builder tests: the repository's samples (the seed's
// sample DeviceConfig, named neuron) and the variants the golden files pin down.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "lib/operator/children.h"
#include "lib/operator/device_config.h"
#include "lib/operator/yaml_input.h"
#include "nlohmann/json.hpp"

namespace neuron::op::childtest {

using nlohmann::json;

inline constexpr char kUid[] = "0b8c5a52-7f4e-4a56-9c1e-000000000001";

inline std::string SourcePath(const std::string& rel) {
  const char* root = std::getenv("NEURON_SOURCE_DIR");  // set by CTest; else run from the repo
  return std::string(root != nullptr ? root : ".") + "/" + rel;
}

inline std::string ReadFile(const std::string& rel) {
  std::ifstream in(SourcePath(rel));
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::vector<json> LoadYaml(const std::string& rel) {
  auto docs = ParseYamlDocuments(ReadFile(rel));
  REQUIRE(docs.ok());
  return *docs;
}

inline DeviceConfig FromSample(const std::string& rel) {
  json obj = LoadYaml(rel).front();
  obj["metadata"]["uid"] = kUid;  // the API server sets it
  auto dc = ParseDeviceConfig(obj);
  REQUIRE(dc.ok());
  REQUIRE(ValidateDeviceConfig(*dc).empty());
  return *dc;
}

inline DeviceConfig Sample() {
  return FromSample("deploy/operator/samples/deviceconfig-v1beta1.yaml");
}

// One golden file: a DeviceConfig on a cluster serving `apis`.
struct Variant {
  std::string golden;
  DeviceConfig dc;
  ClusterApis apis;
};

inline std::vector<Variant> Variants() {
  std::vector<Variant> v;
  v.push_back({"sample-v1beta1", Sample(), {}});
  v.push_back(
      {"sample-v1alpha1", FromSample("deploy/operator/samples/deviceconfig-v1alpha1.yaml"), {}});

  DeviceConfig dra = Sample();  // as the seed's DRA sample: the three images give way
  dra.spec.dra_driver_image = "public.ecr.aws/neuron/neuron-dra-driver:1.0.1";
  dra.spec.device_plugin_image.clear();
  dra.spec.custom_scheduler_image.clear();
  dra.spec.scheduler_extension_image.clear();
  ClusterApis dra_apis;
  dra_apis.dra_version = "v1";
  v.push_back({"dra", dra, dra_apis});

  // Our DRA driver everywhere, every optional feature, on a 1.34 cluster.
  DeviceConfig ours = Sample();
  ours.spec.allocation = Allocation::kDra;
  ours.spec.allocation_set = true;
  ours.spec.dra_set = true;
  ours.spec.dra = {true, true, true};
  ours.spec.custom_scheduler_image.clear();
  ours.spec.scheduler_extension_image.clear();
  v.push_back({"dra-ours", ours, dra_apis});

  // Mixed pools on an EKS AMI and a 1.33 cluster (v1beta1: no extended-resource class).
  DeviceConfig mixed = Sample();
  mixed.spec.driver_mode = DriverMode::kPreinstalled;
  mixed.spec.selector.clear();
  mixed.spec.allocation = Allocation::kMixed;
  mixed.spec.allocation_set = true;
  mixed.spec.dra_set = true;
  mixed.spec.dra.extended_resource = true;
  ClusterApis beta_apis;
  beta_apis.dra_version = "v1beta1";
  v.push_back({"dra-mixed", mixed, beta_apis});

  DeviceConfig pre = Sample();  // an EKS Neuron AMI: no Module, placement by affinity
  pre.spec.driver_mode = DriverMode::kPreinstalled;
  pre.spec.selector.clear();
  pre.spec.image_repo_secret = "ecr-pull";
  pre.spec.node_agent_image = "registry.example.com/neuron-k8s:1.0.0";
  v.push_back({"preinstalled", pre, {}});

  DeviceConfig ocp = Sample();
  ocp.spec.driver_version = "2.28.0.0";
  ocp.spec.image_repo_secret = "ecr-pull";
  ClusterApis ocp_apis;
  ocp_apis.nfd_group = "nfd.openshift.io";
  ocp_apis.service_monitor = true;
  v.push_back({"openshift-monitoring", ocp, ocp_apis});
  for (Variant& x : v) REQUIRE(ValidateDeviceConfig(x.dc).empty());
  return v;
}

inline const json* Find(const std::vector<Child>& children, const std::string& kind,
                        const std::string& name) {
  for (const Child& c : children) {
    if (c.object["kind"] == kind && c.object["metadata"]["name"] == name) return &c.object;
  }
  return nullptr;
}

// The extender runs as a container of the second scheduler's pod (<name>-custom-scheduler).
inline bool RunsExtender(const std::vector<Child>& children,
                         const std::string& dc_name = "neuron") {
  const json* d = Find(children, "Deployment", dc_name + "-custom-scheduler");
  if (d == nullptr) return false;
  for (const json& c : d->at("spec")["template"]["spec"]["containers"]) {
    if (c["name"] == "extender") return true;
  }
  return false;
}

// spec.template.spec of a workload (DaemonSet, Deployment) that must exist.
inline const json& PodSpec(const json* workload) {
  REQUIRE(workload != nullptr);
  return workload->at("spec").at("template").at("spec");
}

// Whether a container's args hold `arg` exactly.
inline bool HasArg(const json& container, const std::string& arg) {
  for (const json& a : container["args"]) {
    if (a == arg) return true;
  }
  return false;
}

}  // namespace neuron::op::childtest
