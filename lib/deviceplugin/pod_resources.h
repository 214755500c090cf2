// File: lib/deviceplugin/pod_resources.h
// What pods hold on this node according to the kubelet's PodResources v1 API (List).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/deviceplugin/ids.h"

namespace neuron::deviceplugin {

// What one pod holds on this node, from PodResources List (IDs unioned over containers).
struct PodHoldings {
  std::string ns, name;
  std::map<ResourceKind, std::vector<int>> ids;
};

// PodResources v1 List on `socket` (unix path), converted to holdings of Neuron resources.
absl::StatusOr<std::vector<PodHoldings>> ListPodHoldings(const std::string& socket);

}  // namespace neuron::deviceplugin
