// File: lib/dra/node_labels.h
// What the DRA driver publishes from its Node's labels (pure): the EC2 instance topology's
// network node layers, which EKS puts on nodes as labels (EKS user guide, "Place distributed
// AI/ML workloads with network topology labels"):
//   topology.k8s.aws/network-node-layer-1 .. -3  ->  networkNodeLayer1 .. 3 (AWS's attributes)
// The driver never asks EC2 itself. AWS's capacityBlockId has no label to come from (Karpenter's
// karpenter.k8s.aws/capacity-reservation-id is a capacity reservation id, cr-..., not the
// UltraServer capacity block id of DescribeInstanceTopology), so it is not published.
#pragma once

#include <array>
#include <string>

#include "nlohmann/json.hpp"

namespace neuron::dra {

inline constexpr std::array<const char*, 3> kNetworkNodeLayerLabels = {
    "topology.k8s.aws/network-node-layer-1", "topology.k8s.aws/network-node-layer-2",
    "topology.k8s.aws/network-node-layer-3"};

// Layers 1..3 of a Node object; "" where the label is missing, empty or not a string.
std::array<std::string, 3> NetworkNodeLayers(const nlohmann::json& node);

}  // namespace neuron::dra
