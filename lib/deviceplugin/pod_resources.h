// File: lib/deviceplugin/pod_resources.h
// What pods hold on this node according to the kubelet's PodResources v1 API (List). The reply
// conversion (HoldingsFromList) is split from the gRPC call so it is pure and can be fuzzed.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/assignment/ids.h"
#include "proto/podresources/v1/api.pb.h"

namespace neuron::deviceplugin {

// What one pod holds on this node, from PodResources List (IDs unioned over containers).
struct PodHoldings {
  std::string ns, name;
  std::map<assignment::ResourceKind, std::vector<int>> ids;
};

// PodResources v1 List on `socket` (unix path), converted to holdings of Neuron resources.
absl::StatusOr<std::vector<PodHoldings>> ListPodHoldings(const std::string& socket);

// Pods holding aws.amazon.com/neuron or /neuroncore in `reply`, one entry per (namespace, name),
// in reply order. IDs are unioned over containers and entries, per kind, ascending and without
// duplicates (the kubelet reports a device an init container handed to an app container under
// both). Other resources and IDs that are not ours (not a ParseId index) are ignored; pods left
// holding nothing are dropped.
std::vector<PodHoldings> HoldingsFromList(const v1::ListPodResourcesResponse& reply);

}  // namespace neuron::deviceplugin
