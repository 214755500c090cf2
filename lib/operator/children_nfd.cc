// File: lib/operator/children_nfd.cc
// The NodeFeatureRule that makes NFD label Neuron nodes feature.node.kubernetes.io/aws-neuron
// from its own PCI scan (pci.device features exist for every class, unlike NFD's default
// labels). Cluster-scoped: it carries the owner label and no ownerReference.
#include <cstdint>
#include <cstdio>
#include <string>

#include "lib/operator/children_internal.h"
#include "lib/topology/device_model.h"

namespace neuron::op::internal {
namespace {

std::string Hex4(uint16_t v) {
  char hex[5];
  std::snprintf(hex, sizeof(hex), "%04x", static_cast<unsigned>(v));
  return hex;
}

// Every Neuron PCI device id lib/topology knows (Trainium3 included), as NFD's pci source
// reports them: lower-case hex without 0x.
const json& NeuronDeviceIds() {
  static const json* const kIds = [] {
    auto* ids = new json(json::array());
    for (uint32_t id = 0; id <= 0xffff; ++id) {
      if (topology::ModelForPciDevice(static_cast<uint16_t>(id))) {
        ids->push_back(Hex4(static_cast<uint16_t>(id)));
      }
    }
    return ids;
  }();
  return *kIds;
}

}  // namespace

void AddNfdRule(const DeviceConfig& dc, const ClusterApis& apis, std::vector<Child>& out) {
  if (apis.nfd_group.empty()) return;  // the reconciler reports NFD missing
  // Only In: the operators OpenShift's NFD accepts are a subset of upstream's.
  json expressions = {{"vendor", {{"op", "In"}, {"value", {Hex4(topology::kNeuronPciVendor)}}}},
                      {"device", {{"op", "In"}, {"value", NeuronDeviceIds()}}}};
  json rule = Object(dc, apis.nfd_group + "/v1alpha1", "NodeFeatureRule", ClusterName(dc, "neuron"),
                     Component::kNfd, /*namespaced=*/false);
  rule["spec"] = {
      {"rules",
       json::array({{{"name", "aws-neuron"},
                     {"labels", {{"feature.node.kubernetes.io/aws-neuron", "true"}}},
                     {"matchFeatures", json::array({{{"feature", "pci.device"},
                                                     {"matchExpressions", expressions}}})}}})}};
  out.push_back({NodeFeatureRules(apis.nfd_group), std::move(rule), Component::kNfd});
}

}  // namespace neuron::op::internal
