// File: lib/deviceplugin/pod_resources.h
// The kubelet's PodResources v1 List reply -> what each pod holds of our resources. Split from
// the gRPC call (ListPodHoldings in handshake.h) so the conversion is pure and can be fuzzed.
#pragma once

#include <vector>

#include "lib/deviceplugin/handshake.h"
#include "proto/podresources/v1/api.pb.h"

namespace neuron::deviceplugin {

// Pods holding aws.amazon.com/neuron or /neuroncore in `reply`, one entry per (namespace, name),
// in reply order. IDs are unioned over containers and entries, per kind, ascending and without
// duplicates (the kubelet reports a device an init container handed to an app container under
// both). Other resources and IDs that are not ours (not a ParseId index) are ignored; pods left
// holding nothing are dropped.
std::vector<PodHoldings> HoldingsFromList(const v1::ListPodResourcesResponse& reply);

}  // namespace neuron::deviceplugin
