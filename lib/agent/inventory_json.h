// File: lib/agent/inventory_json.h
// The /inventory document: what the agent sees on this node, for people and scripts.
#pragma once

#include <string>

#include "lib/inventory/inventory.h"

namespace neuron::agent {

// {"node","instance_type","total_cores","read_errors","devices":[{"index","pci_address",
//  "device_id","family","cores","connected_devices","numa_node","healthy","unhealthy_reason"}]}
std::string InventoryJson(const inventory::Inventory& inv);

}  // namespace neuron::agent
