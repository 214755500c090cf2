// File: lib/deviceplugin/ultraserver_env.cc
#include "lib/deviceplugin/ultraserver_env.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/ultraserver/runtime_env.h"

namespace neuron::deviceplugin {
namespace {

std::string Get(const std::map<std::string, std::string>& m, const char* k) {
  auto it = m.find(k);
  return it == m.end() ? "" : it->second;
}

absl::StatusOr<int> IntAnnotation(const std::map<std::string, std::string>& m, const char* k,
                                  int lo, int hi) {
  const std::string v = Get(m, k);
  int n = 0;
  if (!absl::SimpleAtoi(v, &n) || n < lo || n > hi) {
    return absl::InvalidArgumentError(absl::StrCat("pod annotation ", k, "=\"", v.substr(0, 64),
                                                   "\" is not a number in ", lo, "..", hi));
  }
  return n;
}

// The placement the annotations describe (member fields as the extender wrote them).
absl::StatusOr<ultraserver::Placement> Placed(const std::map<std::string, std::string>& a) {
  ultraserver::Placement p;
  absl::StatusOr<int> size = IntAnnotation(a, kUsSetSizeAnnotation, 1, 4);
  if (!size.ok()) return size.status();
  if (*size == 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("pod annotation ", kUsSetSizeAnnotation, "=3 is no UltraServer set size"));
  }
  absl::StatusOr<int> node = IntAnnotation(a, kUsNodeIdAnnotation, -1, 3);
  if (!node.ok()) return node.status();
  absl::StatusOr<int> rank = IntAnnotation(a, kUsRankAnnotation, 0, 3);
  if (!rank.ok()) return rank.status();
  p.member.size = *size;
  p.member.node_id = *node;
  p.member.server_id = Get(a, kUsServerIdAnnotation);
  p.rank = *rank;
  p.rank0_host = Get(a, kUsRank0HostAnnotation);
  if (p.rank0_host.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("pod annotation ", kUsRank0HostAnnotation, " is missing"));
  }
  if (a.count(kUsModeAnnotation) > 0) {
    absl::StatusOr<int> mode = IntAnnotation(a, kUsModeAnnotation, 1, 4);
    if (!mode.ok()) return mode.status();
    p.member.mode = static_cast<ultraserver::Mode>(*mode);
  }
  return p;
}

std::string Describe(const ultraserver::SetMember& m) {
  return absl::StrCat("node ", m.node_id, " of set ", m.server_id, " (size ", m.size, ", mode ",
                      static_cast<int>(m.mode), ")");
}

}  // namespace

bool HasPlacement(const std::map<std::string, std::string>& annotations) {
  return annotations.count(kUsSetSizeAnnotation) > 0;
}

absl::StatusOr<EnvList> UltraServerEnv(
    const std::map<std::string, std::string>& annotations,
    const absl::StatusOr<std::optional<ultraserver::Identity>>& identity) {
  absl::StatusOr<ultraserver::Placement> placed = Placed(annotations);
  if (!placed.ok()) return placed.status();
  if (!identity.ok()) {
    return absl::UnavailableError(absl::StrCat("cannot read this node's UltraServer identity: ",
                                               identity.status().message()));
  }
  const ultraserver::SetMember& want = placed->member;
  if (!identity->has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the scheduler placed the pod as ", Describe(want),
                     ", but this node's driver shows no UltraServer (no ultraserver_mode)"));
  }
  std::optional<ultraserver::SetMember> have = (*identity)->MemberOf(want.size);
  if (!have) {
    return absl::FailedPreconditionError(
        absl::StrCat("the scheduler placed the pod as ", Describe(want),
                     ", but this node's driver supports no UltraServer set of ", want.size,
                     " (modes ", ultraserver::ModesLabelValue((*identity)->modes), ")"));
  }
  const bool mode_ok = want.mode == ultraserver::Mode::kUnset || want.mode == have->mode;
  if (have->server_id != want.server_id || have->node_id != want.node_id || !mode_ok) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the scheduler placed the pod as ", Describe(want), ", but this node's driver says it is ",
        Describe(*have), ": the node's UltraServer labels are stale; the pod must be rescheduled"));
  }
  ultraserver::Placement p = *placed;
  p.member = *have;
  return ultraserver::RuntimeEnv(p);
}

}  // namespace neuron::deviceplugin
