// File: lib/agent/pod_attribution.h
// Which pod, namespace and container hold each NeuronCore of this node, from the kubelet's
// PodResources v1 List reply. Pure: the reply and the node's layout in, one row per allocated
// PHYSICAL core out (the `core` label of the agent's per-core families is the physical
// neuron_core<M> index, so rows join on device and core).
//
// Both allocation paths:
//   - device plugin: aws.amazon.com/neuron device IDs ("N" = /dev/neuronN: every core of it) and
//     aws.amazon.com/neuroncore IDs ("N" = logical core N of the node: device N / logical cores
//     per device, covering physical cores k*lnc .. k*lnc+lnc-1 of it), read with
//     assignment::ParseResourceKind / ParseId as the device plugin reads them;
//   - DRA: dynamic resources of driver neuron.aws.com, device names read with
//     dra::ParseDeviceName: neurondevice<N> (whole device), neurondevice<N>-core<M> (logical core
//     M of device N at the node's LNC) and neuronnode (every device of the node).
//
//   PodAttribution a = AttributePods(reply, NodeLayoutFrom(inventory));
#pragma once

#include <string>
#include <vector>

#include "lib/inventory/inventory.h"
#include "proto/podresources/v1/api.pb.h"

namespace neuron::agent {

// The `resource` value of a DRA claim's cores (the device plugin's are their resource names).
inline constexpr char kDraResource[] = "dra:neuron.aws.com";

// What the conversion needs of the node: each device's index and physical core count, the LNC
// in effect (0 = unknown: logical core IDs cannot be placed) and the DRA pool (the node name;
// "" = accept any pool).
struct NodeLayout {
  struct Device {
    int index = 0;
    int physical_cores = 0;
  };
  std::vector<Device> devices;  // ascending index
  int lnc = 0;
  std::string pool;
};

// The layout of the devices present in `inv`.
NodeLayout NodeLayoutFrom(const inventory::Inventory& inv);

// One allocated physical core. Containers of one pod holding the same core (an init or sidecar
// container and an app container listed with the same ID) are one row whose `container` joins
// their names with ","; likewise `resource` if one pod holds a core through two paths. Two pods
// holding one core (a shared ResourceClaim) are two rows.
struct CoreAllocation {
  int device = 0;
  int core = 0;  // physical core index on the device (neuron_core<M>)
  std::string ns, pod, container, resource;
  bool operator==(const CoreAllocation&) const = default;
};

struct PodAttribution {
  // Sorted by (device, core, ns, pod); no two rows with the same four.
  std::vector<CoreAllocation> cores;
  // What was ignored and why, one line each (unknown device names, IDs out of range, empty
  // pod names, ...), at most kMaxProblems; problems_total counts them all.
  std::vector<std::string> problems;
  int problems_total = 0;
};

inline constexpr int kMaxProblems = 20;

// Never fails: anything that does not name a core of `layout` is left out and reported.
PodAttribution AttributePods(const v1::ListPodResourcesResponse& reply, const NodeLayout& layout);

}  // namespace neuron::agent
