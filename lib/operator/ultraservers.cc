// File: lib/operator/ultraservers.cc
// status.ultraServers from the selected Nodes' UltraServer labels (ultraservers.h).
#include "lib/operator/ultraservers.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lib/base/json_access.h"
#include "lib/ultraserver/labels.h"

namespace neuron::op {
namespace {

using nlohmann::json;

struct Server {
  std::vector<std::pair<int, std::string>> nodes;  // (node-id-4, node name)
  std::optional<std::vector<int>> modes;           // the modes every node supports
};

// The node's labels as a string map (non-string values are skipped).
std::map<std::string, std::string> LabelMap(const json& node) {
  std::map<std::string, std::string> out;
  const json& labels = MemberOrNull(node, {"metadata", "labels"});
  if (!labels.is_object()) return out;
  for (const auto& [k, v] : labels.items()) {
    if (v.is_string()) out.emplace(k, v.get<std::string>());
  }
  return out;
}

std::vector<int> Intersect(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

json ServerJson(const std::string& id, Server& s) {
  std::sort(s.nodes.begin(), s.nodes.end());
  json names = json::array();
  for (const auto& [node_id, name] : s.nodes) names.push_back(name);
  return {{"id", id},
          {"nodes", std::move(names)},
          {"modes", ultraserver::ModesLabelValue(s.modes.value_or(std::vector<int>{}))}};
}

}  // namespace

json UltraServersStatus(const std::vector<const json*>& nodes) {
  std::map<std::string, Server> servers;
  int without_id = 0;
  bool any = false;
  for (const json* node : nodes) {
    const std::optional<ultraserver::Identity> id =
        ultraserver::IdentityFromLabels(LabelMap(*node));
    if (!id) continue;
    any = true;
    // The labels as they are, whatever the modes say (a node without X4 may still carry ids).
    if (id->server_id_4.empty() || id->node_id_4 < 0) {
      ++without_id;
      continue;
    }
    Server& s = servers[id->server_id_4];
    s.nodes.emplace_back(id->node_id_4, StringAt(*node, {"metadata", "name"}));
    s.modes = s.modes ? Intersect(*s.modes, id->modes) : id->modes;
  }
  if (!any) return nullptr;
  json list = json::array();
  for (auto& [server_id, s] : servers) list.push_back(ServerJson(server_id, s));
  return {{"count", static_cast<int>(servers.size())},
          {"servers", std::move(list)},
          {"nodesWithoutServerId", without_id}};
}

}  // namespace neuron::op
