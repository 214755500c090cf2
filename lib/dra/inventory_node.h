// File: lib/dra/inventory_node.h
// The DRA driver's view of the node, converted from the latest inventory::Inventory (pure):
// what the ResourceSlices publish (NodeDeviceInfo) and what claim preparation checks against
// (NodeFacts).
//
// Health policy, from the watcher's reasons (inventory/watcher.h):
//   "uncorrectable ECC error" -> evict (NoExecute): what the device computes can no longer be
//       trusted, so pods already running on it must leave, not only new ones stay away;
//   "vanished", "driver unbound" -> NoSchedule: usually a driver reload or upgrade (KMM drains
//       the node itself) or a hot-unplug the admin is handling; pods on it fail on their own,
//       and evicting everything during a routine reload would be worse.
// Without DRADeviceTaints the device simply leaves the slice (resource_slice.h).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "lib/dra/neuron_preparer.h"
#include "lib/dra/resource_slice.h"
#include "lib/inventory/inventory.h"

namespace neuron::dra {

// Published when the driver's module version cannot be read (the attribute must not be empty).
inline constexpr char kUnknownDriverVersion[] = "unknown";

DeviceHealth HealthOf(const inventory::Device& device);

// FailedPrecondition when the instance type is not a known shape or LNC is unresolved (the
// inventory's lnc_error): a slice with the wrong shape or core count is worse than none, so the
// last published slices stay until the next scan resolves it.
absl::StatusOr<NodeDeviceInfo> NodeDeviceInfoFromInventory(const inventory::Inventory& inv,
                                                           const std::string& node_name,
                                                           const std::string& dra_version);

// Unavailable while no device is known or LNC is unresolved (the kubelet retries the claim).
absl::StatusOr<NodeFacts> NodeFactsFromInventory(const inventory::Inventory& inv);

}  // namespace neuron::dra
