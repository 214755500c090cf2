// File: lib/dra/ultraserver_peers.cc
#include "lib/dra/ultraserver_peers.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/k8s/resource.h"
#include "lib/ultraserver/labels.h"
#include "spdlog/spdlog.h"

namespace neuron::dra {

std::string Rank0Selector(const ultraserver::SetMember& m) {
  return absl::StrCat(ultraserver::ServerIdLabel(m.size), "=", m.server_id, ",",
                      ultraserver::NodeIdLabel(m.size), "=0");
}

absl::StatusOr<std::string> FindRank0Host(k8s::RestClient& client,
                                          const ultraserver::SetMember& m) {
  k8s::ListOptions opts;
  opts.label_selector = Rank0Selector(m);
  absl::StatusOr<k8s::ListResult> nodes = client.ListAll(k8s::resources::kNodes, "", opts);
  if (!nodes.ok()) {
    return nodes.status();
  }
  std::vector<std::string> names;
  for (const nlohmann::json& n : nodes->items) {
    std::string name = StringAt(n, {"metadata", "name"});
    if (!name.empty()) {
      names.push_back(std::move(name));
    }
  }
  if (names.empty()) {
    return absl::NotFoundError(absl::StrCat("no node matches ", opts.label_selector));
  }
  std::sort(names.begin(), names.end());
  if (names.size() > 1) {
    spdlog::warn("dra: {} nodes match {} (one expected); using {}", names.size(),
                 opts.label_selector, names.front());
  }
  return names.front();
}

}  // namespace neuron::dra
