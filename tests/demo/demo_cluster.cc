// File: tests/demo/demo_cluster.cc
#include "tests/demo/demo_cluster.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/k8s/resource.h"
#include "lib/k8s/transport.h"
#include "lib/operator/children.h"
#include "lib/operator/reconciler.h"
#include "lib/operator/yaml_input.h"

namespace neuron::demo {
namespace {

using nlohmann::json;

const k8s::ResourceRef kModules{"kmm.sigs.x-k8s.io", "v1beta1", "modules", true};

absl::StatusOr<std::vector<json>> LoadYaml(const std::string& path) {
  std::ifstream in(path);
  if (!in.good()) return absl::NotFoundError("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return op::ParseYamlDocuments(text.str());
}

k8s::ListOptions OwnedBySample() {
  k8s::ListOptions opts;
  opts.label_selector = absl::StrCat(op::kOwnerLabel, "=", kOperatorNs, ".neuron");
  return opts;
}

int IntAt(const json& obj, const json::json_pointer& p, int otherwise) {
  return obj.contains(p) && obj.at(p).is_number_integer() ? obj.at(p).get<int>() : otherwise;
}

}  // namespace

absl::Status DemoCluster::Start(const std::string& source_dir, const std::string& kubeconfig_path) {
  source_dir_ = source_dir;
  NEURON_RETURN_IF_ERROR(server_.Start());
  k8s::ClientConfig cfg;
  cfg.server = server_.url();
  NEURON_ASSIGN_OR_RETURN(auto transport, k8s::NewTransport(cfg, {}, {}));
  client_ = std::make_shared<k8s::RestClient>(transport);
  std::ofstream f(kubeconfig_path);
  f << "apiVersion: v1\nkind: Config\ncurrent-context: demo\n"
    << "clusters:\n- name: fake\n  cluster:\n    server: " << server_.url() << "\n"
    << "users:\n- name: demo\n  user:\n    token: demo-token\n"
    << "contexts:\n- name: demo\n  context:\n    cluster: fake\n    user: demo\n";
  if (!f.good()) return absl::InternalError("cannot write " + kubeconfig_path);

  NEURON_RETURN_IF_ERROR(InstallCrds("deploy/operator/crd-deviceconfigs.yaml"));
  NEURON_RETURN_IF_ERROR(InstallCrds("deploy/operator/crd-neuroncaches.yaml"));
  // What a cluster with KMM and NFD serves (their CRDs as those projects install them).
  NEURON_RETURN_IF_ERROR(InstallCrds("tests/operator/testdata/crds/kmm-modules.yaml"));
  NEURON_RETURN_IF_ERROR(InstallCrds("tests/operator/testdata/crds/nfd-k8s-sigs.yaml"));
  for (const char* ns : {kOperatorNs, kWorkloadNs}) {
    json obj = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}};
    NEURON_RETURN_IF_ERROR(client_->Create(k8s::resources::kNamespaces, "", obj).status());
  }
  return absl::OkStatus();
}

absl::Status DemoCluster::InstallCrds(const std::string& rel) {
  NEURON_ASSIGN_OR_RETURN(std::vector<json> docs, LoadYaml(source_dir_ + "/" + rel));
  for (const json& crd : docs) {
    NEURON_RETURN_IF_ERROR(client_->Create(k8s::resources::kCRDs, "", crd).status());
  }
  return absl::OkStatus();
}

absl::Status DemoCluster::AddNode(const std::string& name, const std::string& instance_type) {
  json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata",
                {{"name", name},
                 {"labels",
                  {{"kubernetes.io/hostname", name},
                   {"node.kubernetes.io/instance-type", instance_type},
                   {"feature.node.kubernetes.io/aws-neuron", "true"}}}}},
               {"status",
                {{"capacity", {{"cpu", "192"}, {"memory", "2Ti"}, {"pods", "110"}}},
                 {"allocatable", {{"cpu", "191"}, {"memory", "2Ti"}, {"pods", "110"}}}}}};
  return client_->Create(k8s::resources::kNodes, "", node).status();
}

absl::Status DemoCluster::SetExtendedResources(const std::string& node, const std::string& resource,
                                               int capacity, int allocatable) {
  const json patch = {{"status",
                       {{"capacity", {{resource, std::to_string(capacity)}}},
                        {"allocatable", {{resource, std::to_string(allocatable)}}}}}};
  return client_
      ->Patch(k8s::resources::kNodes, "", node, k8s::PatchType::kMerge, patch,
              k8s::PatchOptions{"", false, "status"})
      .status();
}

absl::StatusOr<json> DemoCluster::ApplySampleDeviceConfig() {
  NEURON_ASSIGN_OR_RETURN(
      std::vector<json> docs,
      LoadYaml(source_dir_ + "/deploy/operator/samples/deviceconfig-v1beta1.yaml"));
  if (docs.empty()) return absl::NotFoundError("the sample DeviceConfig file is empty");
  return client_->Create(op::DeviceConfigRef(), kOperatorNs, docs.front());
}

absl::StatusOr<std::vector<std::string>> DemoCluster::OperatorObjects() {
  std::vector<std::string> out;
  op::ClusterApis apis;
  apis.kmm = true;
  apis.nfd_group = "nfd.k8s-sigs.io";
  for (const k8s::ResourceRef& ref : op::ChildKinds(apis)) {
    absl::StatusOr<k8s::ListResult> list =
        client_->ListAll(ref, ref.namespaced ? kOperatorNs : "", OwnedBySample());
    if (absl::IsNotFound(list.status())) continue;
    NEURON_RETURN_IF_ERROR(list.status());
    for (const json& item : list->items) {
      out.push_back(
          absl::StrCat(item.value("kind", ref.resource), " ", item["metadata"].value("name", "")));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<int> DemoCluster::PlayWorkloadControllers(int nodes) {
  const k8s::PatchOptions status_only{"", false, "status"};
  int updated = 0;
  NEURON_ASSIGN_OR_RETURN(k8s::ListResult sets, client_->ListAll(k8s::resources::kDaemonSets,
                                                                 kOperatorNs, OwnedBySample()));
  for (const json& ds : sets.items) {
    const int gen = IntAt(ds, "/metadata/generation"_json_pointer, 1);
    const json status = {{"observedGeneration", gen},
                         {"desiredNumberScheduled", nodes},
                         {"currentNumberScheduled", nodes},
                         {"updatedNumberScheduled", nodes},
                         {"numberReady", nodes},
                         {"numberAvailable", nodes}};
    NEURON_RETURN_IF_ERROR(client_
                               ->Patch(k8s::resources::kDaemonSets, kOperatorNs,
                                       ds["metadata"].value("name", ""), k8s::PatchType::kMerge,
                                       {{"status", status}}, status_only)
                               .status());
    ++updated;
  }
  NEURON_ASSIGN_OR_RETURN(k8s::ListResult deploys, client_->ListAll(k8s::resources::kDeployments,
                                                                    kOperatorNs, OwnedBySample()));
  for (const json& d : deploys.items) {
    const int gen = IntAt(d, "/metadata/generation"_json_pointer, 1);
    const int replicas = IntAt(d, "/spec/replicas"_json_pointer, 1);
    const json status = {{"observedGeneration", gen},
                         {"replicas", replicas},
                         {"updatedReplicas", replicas},
                         {"readyReplicas", replicas},
                         {"availableReplicas", replicas}};
    NEURON_RETURN_IF_ERROR(client_
                               ->Patch(k8s::resources::kDeployments, kOperatorNs,
                                       d["metadata"].value("name", ""), k8s::PatchType::kMerge,
                                       {{"status", status}}, status_only)
                               .status());
    ++updated;
  }
  NEURON_ASSIGN_OR_RETURN(k8s::ListResult modules,
                          client_->ListAll(kModules, kOperatorNs, OwnedBySample()));
  for (const json& m : modules.items) {
    const json counts = {{"nodesMatchingSelectorNumber", nodes},
                         {"desiredNumber", nodes},
                         {"availableNumber", nodes}};
    NEURON_RETURN_IF_ERROR(
        client_
            ->Patch(kModules, kOperatorNs, m["metadata"].value("name", ""), k8s::PatchType::kMerge,
                    {{"status", {{"moduleLoader", counts}, {"devicePlugin", counts}}}}, status_only)
            .status());
    ++updated;
  }
  return updated;
}

absl::StatusOr<json> DemoCluster::DeviceConfig() {
  return client_->Get(op::DeviceConfigRef(), kOperatorNs, "neuron");
}

}  // namespace neuron::demo
