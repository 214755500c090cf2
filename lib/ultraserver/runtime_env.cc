// File: lib/ultraserver/runtime_env.cc
#include "lib/ultraserver/runtime_env.h"

#include "absl/strings/str_cat.h"

namespace neuron::ultraserver {

std::vector<std::pair<std::string, std::string>> RuntimeEnv(const Placement& p) {
  const std::string server = p.member.server_id.empty() ? kNoServerId : p.member.server_id;
  return {
      {kEnvMode, absl::StrCat(static_cast<int>(p.member.mode))},
      {kEnvServerId, server},
      {kEnvNodeId, absl::StrCat(p.member.node_id)},
      {kEnvTopoId, absl::StrCat(p.rank)},
      {kEnvTopoId0Host, p.rank0_host},
  };
}

}  // namespace neuron::ultraserver
