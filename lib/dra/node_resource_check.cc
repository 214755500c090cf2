// File: lib/dra/node_resource_check.cc
#include "lib/dra/node_resource_check.h"

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "lib/k8s/resource.h"
#include "spdlog/spdlog.h"

namespace neuron::dra {

std::vector<std::string> AdvertisedNeuronResources(const nlohmann::json& node) {
  std::set<std::string> found;
  if (!node.is_object()) return {};
  const auto status_it = node.find("status");
  if (status_it == node.end() || !status_it->is_object()) return {};
  const nlohmann::json* status = &*status_it;
  for (const char* field : {"allocatable", "capacity"}) {
    auto it = status->find(field);
    if (it == status->end() || !it->is_object()) continue;
    for (const auto& [name, quantity] : it->items()) {
      if (absl::StartsWith(name, "aws.amazon.com/neuron")) found.insert(name);
    }
  }
  return {found.begin(), found.end()};
}

absl::StatusOr<std::vector<std::string>> CheckNodeResources(k8s::RestClient& client,
                                                            const std::string& node_name) {
  absl::StatusOr<nlohmann::json> node = client.Get(k8s::resources::kNodes, "", node_name);
  if (!node.ok()) {
    spdlog::warn("cannot read node={} to check for device-plugin resources error=\"{}\"", node_name,
                 std::string(node.status().message()));
    return node.status();
  }
  std::vector<std::string> names = AdvertisedNeuronResources(*node);
  if (!names.empty()) {
    std::string ops;
    for (const std::string& n : names) {
      const std::string path = absl::StrReplaceAll(n, {{"~", "~0"}, {"/", "~1"}});
      absl::StrAppend(&ops, ops.empty() ? "" : ",",
                      "{\"op\":\"remove\",\"path\":\"/status/capacity/", path, "\"}");
    }
    spdlog::warn(
        "node={} advertises {} in its status (a device plugin runs here, or once registered "
        "here: the kubelet keeps the name at 0 for good): kube-scheduler counts pods asking for "
        "these as extended resources against that capacity instead of serving them through DRA "
        "(DRAExtendedResource) on this node; claims are served as usual. Once no device plugin "
        "runs here: kubectl patch node {} --subresource=status --type=json -p '[{}]'",
        node_name, absl::StrJoin(names, ","), node_name, ops);
  }
  return names;
}

}  // namespace neuron::dra
