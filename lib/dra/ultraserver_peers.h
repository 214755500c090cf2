// File: lib/dra/ultraserver_peers.h
// Finds the Node holding node id 0 of an UltraServer set through the API, by the labels AWS's
// device plugin (and our agent) put on UltraServer nodes (lib/ultraserver/labels.h):
//   GET /api/v1/nodes?labelSelector=neuron.amazonaws.com/ultraserver-server-id-N=<id>,
//                                   neuron.amazonaws.com/ultraserver-node-id-N=0
// Needs list on nodes (the driver's ClusterRole). Never cloud APIs.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "lib/k8s/rest_client.h"
#include "lib/ultraserver/identity.h"

namespace neuron::dra {

// "neuron.amazonaws.com/ultraserver-server-id-4=<id>,neuron.amazonaws.com/ultraserver-node-id-4=0"
std::string Rank0Selector(const ultraserver::SetMember& m);

// The name of the node (the first by name when, wrongly, several match); NotFound when none;
// the API's error otherwise.
absl::StatusOr<std::string> FindRank0Host(k8s::RestClient& client, const ultraserver::SetMember& m);

}  // namespace neuron::dra
