// File: lib/dra/node_labels.cc
#include "lib/dra/node_labels.h"

#include "lib/base/json_access.h"

namespace neuron::dra {

std::array<std::string, 3> NetworkNodeLayers(const nlohmann::json& node) {
  std::array<std::string, 3> out;
  const nlohmann::json& labels = MemberOrNull(node, {"metadata", "labels"});
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = StringMember(labels, kNetworkNodeLayerLabels[i]);
  }
  return out;
}

}  // namespace neuron::dra
