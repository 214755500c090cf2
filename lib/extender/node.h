// File: lib/extender/node.h
// What the extender knows about one node's Neuron hardware, from its Node object: the shape
// (instance-type label, else the node agent's NFD labels, else allocatable/capacity counts, read
// as a chain of devices since nothing says how they are linked), the LNC (label, else implied by
// the neuroncore/neuron capacity ratio, else the family default) and the healthy capacity
// (status.allocatable), its UltraServer identity labels and whether it takes new pods
// (Ready, not cordoned). Shape models are shared between nodes of the same shape.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lib/base/json_prune.h"
#include "lib/topology/topology.h"
#include "lib/ultraserver/identity.h"
#include "nlohmann/json.hpp"

namespace neuron::extender {

inline constexpr char kInstanceTypeLabel[] = "node.kubernetes.io/instance-type";
inline constexpr char kInstanceTypeBetaLabel[] = "beta.kubernetes.io/instance-type";
inline constexpr char kNfdPrefix[] = "feature.node.kubernetes.io/aws-neuron";
// Optional: the node's Logical NeuronCore config (1 or 2) when it is not the family default.
inline constexpr char kLncLabel[] = "feature.node.kubernetes.io/aws-neuron-lnc";

// One shape at one LNC, with the request sizes that can ever fit it (all devices free).
struct ShapeModel {
  std::string name;  // instance type, or "<n>-device node" when unknown
  topology::NodeTopology topo;
  int lnc = 0;
  std::vector<bool> device_counts;  // [k]: some valid set of k devices exists
  std::vector<bool> core_counts;    // [k]: some valid set of k cores exists
  int total_cores() const { return topo.devices * topo.cores_per_device; }
  // "1, 4, 8 or 16"
  std::string DeviceCountsText() const;
};

struct NodeInfo {
  std::string name;
  std::string source;  // "instance-type", "nfd", "capacity" or "" (no Neuron hardware)
  std::shared_ptr<const ShapeModel> shape;  // null: not a Neuron node
  int64_t alloc_devices = -1;               // status.allocatable, -1 = not reported
  int64_t alloc_cores = -1;
  // The UltraServer identity AWS's labels describe (lib/ultraserver/labels.h); null when the
  // node is no UltraServer node. Shared: NodeInfo is copied into every computed state.
  std::shared_ptr<const ultraserver::Identity> ultraserver;
  // Compact copies of it for the filter's first test of thousands of candidates (no pointer
  // chase): bit 1 << N set when the node supports sets of N; its node id in its set of 2 / 4.
  uint8_t us_sizes = 0;
  int8_t us_node_id2 = -1, us_node_id4 = -1;
  // False when spec.unschedulable is set or the Ready condition is not "True".
  bool schedulable = true;
  // Every Neuron device and core the shape has is allocatable (none reported unhealthy).
  bool FullyAllocatable() const;
};

NodeInfo ParseNode(const nlohmann::json& node);

// The parts of a Node that ParseNode reads (for pruned list parsing; lib/base/json_prune.h).
const JsonKeep& NodeFields();

// Shared, cached model of `shape` at `lnc` (0 = family default); null on an unsupported LNC.
std::shared_ptr<const ShapeModel> ModelFor(const topology::Shape& shape, int lnc);

}  // namespace neuron::extender
