// File: lib/deviceplugin/allocator.h
// Allocation policy for one Neuron resource, with no gRPC types: what to advertise, which IDs
// to prefer, and what a container gets for a set of IDs. The gRPC edge (plugin_service.h) only
// converts messages and absl::Status.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/assignment/ids.h"
#include "lib/deviceplugin/device_source.h"

namespace neuron::deviceplugin {

struct AdvertisedDevice {
  std::string id;
  bool healthy = true;
  int numa_node = -1;  // -1: omit TopologyInfo
};

struct DeviceNode {
  std::string container_path;  // /dev/neuronN
  std::string host_path;       // /dev/neuronN, or the emulated stand-in (/dev/null)
  std::string permissions;     // "rw"
};

struct ContainerAllocation {
  std::vector<DeviceNode> devices;
  std::map<std::string, std::string> envs;
};

// How NEURON_RT_VISIBLE_CORES numbers cores. Either way the ids are LOGICAL NeuronCores (after
// LNC): the runtime takes the variable as logical core ids ("use NEURON_RT_VISIBLE_CORES to
// select specific Logical NeuronCore", aws-neuron-sdk archive/nxd-training/
// pytorch-neuron-programming-guide.rst; a trn2.48xlarge "presents 64 available NeuronCores" at
// LNC=2, logical-neuroncore-config.rst), so cores_per_device below is logical cores per device.
//  kContainer (default): 0-based inside the container. The runtime inside a container sees only
//    the /dev/neuronN nodes mounted into it and numbers them 0..k-1 in ascending N; core ids
//    follow (device rank * cores_per_device + core within device). This is the behaviour of the
//    Neuron driver/runtime since 2.12.x ("device and core indices inside EKS containers are
//    0-based", shared/NEURON.md §2), and it is what an in-pod `neuron-ls` shows (device 0, core
//    ids 0-1 for a pod holding one inf2 device: aws-neuron-sdk#1338).
//  kHost: host-wide logical core ids, as the pre-2.12 scheduler-flow diagram shows
//    (`--device=/dev/neuron1 --env NEURON_RT_VISIBLE_CORES=2,3` on a 2-core-per-device node).
enum class CoreNumbering { kContainer, kHost };

struct AllocatorOptions {
  // DeviceSpec.host_path is resolved by the container runtime ON THE HOST (not in the plugin's
  // container, not under --host-root), and must be an existing character device there or the
  // container fails with CreateContainerError. "" = /dev/neuronN (real hardware). Emulated mode
  // sets "/dev/null": every host has it, so each /dev/neuronN in the container is a char device.
  std::string device_host_path;
  CoreNumbering numbering = CoreNumbering::kContainer;
};

class Allocator {
 public:
  Allocator(assignment::ResourceKind kind, AllocatorOptions opts = {});

  assignment::ResourceKind kind() const { return kind_; }

  // Every ID of this resource on the node (cores follow their device's health and NUMA node).
  std::vector<AdvertisedDevice> Devices(const NodeSnapshot& node) const;

  // GetPreferredAllocation for one container. `hint` = IDs the scheduler extender chose for a
  // pod waiting on this node (AWS_NEURON_IDS); used when it has `size` IDs, all available and
  // containing must_include. Otherwise the best-fit topology set (lib/topology) among
  // `available` containing `must_include`; if no topology-valid set exists, must_include plus
  // the lowest available IDs (the kubelet would fill the rest itself anyway).
  // InvalidArgument: size < 1, size > |available|, unknown/duplicate IDs, must_include not a
  // subset of available.
  absl::StatusOr<std::vector<std::string>> Preferred(
      const NodeSnapshot& node, const std::vector<std::string>& available,
      const std::vector<std::string>& must_include, int size,
      const std::optional<std::vector<int>>& hint = std::nullopt) const;

  // Allocate for one container: the device nodes of every device touched and the env
  // NEURON_RT_VISIBLE_CORES / AWS_NEURON_VISIBLE_DEVICES. InvalidArgument for an empty list,
  // duplicate, unknown or unhealthy IDs, or more IDs than exist.
  absl::StatusOr<ContainerAllocation> Allocate(const NodeSnapshot& node,
                                               const std::vector<std::string>& ids) const;

  // Parses advertised IDs of this resource: known on `node`, no duplicates.
  absl::StatusOr<std::vector<int>> ParseIds(const NodeSnapshot& node,
                                            const std::vector<std::string>& ids) const;

 private:
  int Count(const NodeSnapshot& node) const;
  bool Healthy(const NodeSnapshot& node, int id) const;

  assignment::ResourceKind kind_;
  AllocatorOptions opts_;
};

}  // namespace neuron::deviceplugin
