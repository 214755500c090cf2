// File: lib/operator/ultraservers.h
// The UltraServers a DeviceConfig's nodes form, read back from AWS's node labels (lib/ultraserver
// labels.h, put there by our node agent or AWS's device plugin), for status.ultraServers:
//   {count, servers: [{id, nodes (sorted by node-id-4), modes}], nodesWithoutServerId}
// A server is the nodes sharing neuron.amazonaws.com/ultraserver-server-id-4, its modes those
// every one of them lists; nodes with a mode label but no (valid) server-id-4/node-id-4 pair are
// only counted. Pure: the reconciler passes the
// selected Nodes.
#pragma once

#include <vector>

#include "nlohmann/json.hpp"

namespace neuron::op {

// `nodes`: Node objects (metadata.name and metadata.labels are read). Null when none of them
// carries an UltraServer mode label (the field is then left out of the status).
nlohmann::json UltraServersStatus(const std::vector<const nlohmann::json*>& nodes);

}  // namespace neuron::op
