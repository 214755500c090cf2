// File: lib/dra/ultraserver_placement.cc
#include "lib/dra/ultraserver_placement.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/ultraserver/labels.h"
#include "lib/ultraserver/runtime_env.h"
#include "spdlog/spdlog.h"

namespace neuron::dra {
namespace {

std::string Supported(const ultraserver::Identity& id) {
  const std::vector<int> sizes = id.SetSizes();
  return absl::StrCat("sets of ", sizes.empty() ? "no size" : absl::StrJoin(sizes, ", "),
                      " node(s) (runtime modes ", ultraserver::ModesLabelValue(id.modes), ")");
}

std::string Rank0Host(const ultraserver::SetMember& m, const std::string& node_name,
                      const Rank0Lookup& lookup) {
  if (m.size == 1 || m.node_id == 0) {
    return node_name;
  }
  absl::StatusOr<std::string> host =
      lookup ? lookup(m) : absl::UnavailableError("no API client to look the node up");
  if (host.ok() && !host->empty()) {
    return *host;
  }
  spdlog::warn(
      "dra: found no node labelled {}={},{}=0 (node id 0 of this node's UltraServer set): "
      "NEURON_GLOBAL_TOPOID0_HOST left empty error=\"{}\"",
      ultraserver::ServerIdLabel(m.size), m.server_id, ultraserver::NodeIdLabel(m.size),
      host.ok() ? "empty name" : std::string(host.status().message()));
  return "";
}

}  // namespace

absl::StatusOr<ultraserver::SetMember> PlaceInSet(int nodes, const std::string& node_name,
                                                  const UltraServerFacts& facts) {
  if (!facts.status.ok()) {
    return absl::UnavailableError(
        absl::StrCat("UltraServerConfig ultraserverMode ", nodes, ": cannot read node ", node_name,
                     "'s UltraServer identity: ", facts.status.message()));
  }
  if (!facts.identity) {
    return absl::FailedPreconditionError(absl::StrCat(
        "UltraServerConfig asks for a set of ", nodes, " node(s), but node ", node_name,
        " is not an UltraServer node (the Neuron driver lists no ultraserver_mode)"));
  }
  std::optional<ultraserver::SetMember> m = facts.identity->MemberOf(nodes);
  if (!m) {
    return absl::InvalidArgumentError(
        absl::StrCat("UltraServerConfig ultraserverMode ", nodes, " (a set of ", nodes,
                     " node(s)): node ", node_name, " supports ", Supported(*facts.identity)));
  }
  return *m;
}

std::vector<std::pair<std::string, std::string>> UltraServerEnv(const ultraserver::SetMember& m,
                                                                const std::string& node_name,
                                                                const Rank0Lookup& lookup) {
  ultraserver::Placement p;
  p.member = m;
  p.rank = m.node_id < 0 ? 0 : m.node_id;
  p.rank0_host = Rank0Host(m, node_name, lookup);
  return ultraserver::RuntimeEnv(p);
}

}  // namespace neuron::dra
