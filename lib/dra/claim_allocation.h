// What a ResourceClaim's allocation asks of this node's Neuron DRA driver, read from the claim
// object the API server returns (resource.k8s.io v1 and v1beta1 share the status shape):
//   status.allocation.devices.results[] {request, driver, pool, device, adminAccess}
//   status.allocation.devices.config[]  {source FromClass|FromClaim, requests[], opaque{driver,
//                                         parameters}}
// Only results of our driver in our pool (the node's name) are ours; the rest belong to other
// drivers or nodes. Config entries apply in list order (class configs, then the claim's), a
// later one overriding an earlier one for the requests it names (an empty list = every request),
// as the upstream kubeletplugin helper resolves them. Pure: no I/O.
#ifndef NEURON_LIB_DRA_CLAIM_ALLOCATION_H_
#define NEURON_LIB_DRA_CLAIM_ALLOCATION_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace neuron::dra {

// A published device name: "neurondevice3" (whole device), "neurondevice3-core1" (one
// logical core of device 3, a partition) or "neuronnode" (an UltraServer node's device: every
// device of the node).
struct DeviceRef {
  int device = 0;
  std::optional<int> core;
  bool node = false;  // "neuronnode"; device and core unused
  bool operator==(const DeviceRef&) const = default;
};

// InvalidArgument for any other name.
absl::StatusOr<DeviceRef> ParseDeviceName(std::string_view name);

struct AllocatedDevice {
  std::string request;  // "gpu" or "<request>/<subrequest>"
  std::string name;     // as published
  DeviceRef ref;
  bool admin_access = false;  // monitoring access: may overlap other claims' devices
  bool operator==(const AllocatedDevice&) const = default;
};

struct ClaimAllocation {
  std::vector<AllocatedDevice> devices;    // ours, in result order
  std::optional<int> logical_neuron_core;  // from the NeuronConfig that applies; nullopt = node's
  // Nodes of the UltraServer set (1, 2, 4) from the UltraServerConfig that applies; only on the
  // node device. nullopt = none given.
  std::optional<int> ultraserver_set;
  bool operator==(const ClaimAllocation&) const = default;
};

// Whether a claim config (spec.devices.config[i]) applies to a request, named "<request>" or
// "<request>/<subrequest>": no `requests` list or an empty one means every request, and a config
// naming the parent request applies to its subrequests.
bool ConfigApplies(const nlohmann::json& config, const std::string& request);

// Errors (the message is what the kubelet shows in the pod's events):
//   FailedPrecondition: the object's UID is not `uid` (claim deleted and recreated), the claim
//     is not allocated, or nothing in it is ours on this node;
//   InvalidArgument: a malformed result, a device name we never publish, or a config that is
//     not valid (neuron_config.h), configs giving different LNCs or UltraServer sets to requests
//     of one claim, or an UltraServerConfig applying to a request given a device other than the
//     node device (neuronnode).
// Never throws.
absl::StatusOr<ClaimAllocation> ReadClaimAllocation(const nlohmann::json& claim,
                                                    std::string_view uid, std::string_view driver,
                                                    std::string_view pool);

}  // namespace neuron::dra

#endif  // NEURON_LIB_DRA_CLAIM_ALLOCATION_H_
