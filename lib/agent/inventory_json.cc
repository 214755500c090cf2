#include "lib/agent/inventory_json.h"

#include "absl/strings/str_format.h"
#include "lib/ultraserver/labels.h"
#include "nlohmann/json.hpp"

namespace neuron::agent {
namespace {

// The identity as the node labels carry it; null outside UltraServers.
nlohmann::json UltraServerJson(const std::optional<ultraserver::Identity>& id) {
  if (!id) return nullptr;
  nlohmann::json labels = nlohmann::json::object();
  for (const auto& [key, value] : ultraserver::IdentityLabels(*id)) labels[key] = value;
  return {{"modes", id->modes}, {"trn3", id->trn3}, {"labels", std::move(labels)}};
}

}  // namespace

std::string InventoryJson(const inventory::Inventory& inv) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : inv.devices) {
    devices.push_back({
        {"index", d.index},
        {"pci_address", d.pci_address},
        {"device_id", absl::StrFormat("%04x", d.pci_device_id)},
        {"family", d.model ? topology::FamilyName(d.model->family) : "unknown"},
        {"cores", d.core_count},
        {"physical_cores", d.physical_cores},
        {"sysfs_paths", d.sysfs_paths},
        {"health_status", d.health_status},
        {"unhealthy_components", d.unhealthy_components},
        {"connected_devices", d.connected},
        {"numa_node", d.numa_node},
        {"present", d.present},
        {"healthy", d.healthy},
        {"unhealthy_reason", d.unhealthy_reason},
    });
  }
  nlohmann::json lnc = {{"value", inv.lnc},
                        {"source", inv.lnc_source},
                        {"origin", inv.lnc_origin},
                        {"error", inv.lnc_error}};
  nlohmann::json doc = {
      {"node", inv.node_name},
      {"instance_type", inv.instance_type},
      {"total_cores", inv.total_cores},  // logical
      {"total_physical_cores", inv.total_physical_cores},
      {"lnc", std::move(lnc)},
      {"read_errors", inv.read_errors},
      {"devices", std::move(devices)},
      {"ultraserver", UltraServerJson(inv.ultraserver)},
  };
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace neuron::agent
