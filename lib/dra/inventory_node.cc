// File: lib/dra/inventory_node.cc
#include "lib/dra/inventory_node.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/topology/shapes.h"

namespace neuron::dra {
namespace {

constexpr char kEccReason[] = "uncorrectable ECC error";  // inventory/watcher.cc

}  // namespace

DeviceHealth HealthOf(const inventory::Device& device) {
  DeviceHealth h;
  h.healthy = device.healthy && device.present;
  if (h.healthy) return h;
  h.reason = device.unhealthy_reason.empty() ? "unhealthy" : device.unhealthy_reason;
  h.evict = device.unhealthy_reason == kEccReason;
  return h;
}

absl::StatusOr<NodeDeviceInfo> NodeDeviceInfoFromInventory(const inventory::Inventory& inv,
                                                           const std::string& node_name,
                                                           const std::string& dra_version) {
  NodeDeviceInfo n;
  n.node_name = node_name;
  n.shape = topology::FindShape(inv.instance_type);
  if (n.shape == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "instance type \"", inv.instance_type, "\" is not a known shape; no slices published"));
  }
  if (inv.lnc == 0) {
    return absl::FailedPreconditionError(absl::StrCat("LNC unresolved: ", inv.lnc_error));
  }
  n.lnc = inv.lnc;
  n.neuron_driver_version = inv.driver_version.empty() ? kUnknownDriverVersion : inv.driver_version;
  n.dra_driver_version = dra_version;
  for (const inventory::Device& d : inv.devices) {
    DeviceHealth h = HealthOf(d);
    if (!h.healthy) n.health[d.index] = std::move(h);
  }
  return n;
}

absl::StatusOr<NodeFacts> NodeFactsFromInventory(const inventory::Inventory& inv) {
  NodeFacts f;
  std::optional<topology::DeviceModel> model;
  for (const inventory::Device& d : inv.devices) {
    f.devices = std::max(f.devices, d.index + 1);
    if (d.physical_cores > 0 && f.physical_cores_per_device == 0) {
      f.physical_cores_per_device = d.physical_cores;
    }
    if (d.model && !model) model = d.model;
  }
  if (f.physical_cores_per_device == 0 && model) {
    f.physical_cores_per_device = model->physical_cores;
  }
  if (f.devices == 0) return absl::UnavailableError("no Neuron device found on this node");
  if (inv.lnc == 0) return absl::UnavailableError(absl::StrCat("LNC unresolved: ", inv.lnc_error));
  f.node_lnc = inv.lnc;
  f.lnc2_supported = model && model->lnc_capable;
  return f;
}

}  // namespace neuron::dra
