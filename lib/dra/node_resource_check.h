// File: lib/dra/node_resource_check.h
// DRAExtendedResource (Kubernetes 1.34, alpha) serves an unchanged pod asking for
// aws.amazon.com/neuron through DRA only on nodes that do NOT advertise that resource: the
// scheduler's NodeResourcesFit leaves a request to DRA when the name is missing from the node's
// status.allocatable, and otherwise counts it there ("Insufficient aws.amazon.com/neuron" when
// the count is 0). A device plugin that ever registered on the node leaves the name in place for
// good: the kubelet (1.34, pkg/kubelet/nodestatus/setters.go) sets a removed device plugin's
// resource to 0 instead of dropping it, "to indicate that the resource is managed by device
// plugin". Only removing it from the Node's status clears it. The driver checks its Node at start
// and says so, with the command, instead of pods waiting with a message that blames capacity.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/k8s/rest_client.h"

namespace neuron::dra {

// The Neuron extended resources (aws.amazon.com/neuron, aws.amazon.com/neuroncore, ...) that
// `node` lists in status.allocatable or status.capacity.
std::vector<std::string> AdvertisedNeuronResources(const nlohmann::json& node);

// Reads Node `node_name` and logs a warning naming each advertised Neuron resource (nothing
// when none). Returns the names, or the read's error (logged, never fatal: a driver without
// get on nodes still serves claims).
absl::StatusOr<std::vector<std::string>> CheckNodeResources(k8s::RestClient& client,
                                                            const std::string& node_name);

}  // namespace neuron::dra
