// File: lib/extender/leader_fence.cc
#include "lib/extender/leader_fence.h"

#include <spdlog/spdlog.h>

#include "absl/strings/str_cat.h"
#include "lib/k8s/resource.h"

namespace neuron::extender {

absl::StatusOr<std::pair<std::string, std::string>> ParseLeaseName(const std::string& s) {
  const size_t slash = s.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == s.size() ||
      s.find('/', slash + 1) != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "lease \"", s, "\" must be <namespace>/<name>, e.g. kube-system/neuron-scheduler"));
  }
  return std::pair{s.substr(0, slash), s.substr(slash + 1)};
}

LeaderFence::LeaderFence(k8s::RestClient& client, std::string lease_ns, std::string lease_name,
                         Resync resync, Clock* clock, absl::Duration quiet)
    : client_(client),
      ns_(std::move(lease_ns)),
      name_(std::move(lease_name)),
      resync_(std::move(resync)),
      clock_(clock ? *clock : Clock::Real()),
      quiet_(quiet) {}

absl::StatusOr<LeaseTerm> LeaderFence::ReadTerm() {
  absl::StatusOr<nlohmann::json> lease = client_.Get(k8s::resources::kLeases, ns_, name_);
  if (absl::IsNotFound(lease.status())) return LeaseTerm{};  // nobody has led yet
  if (!lease.ok()) return lease.status();
  const nlohmann::json spec = lease->value("spec", nlohmann::json::object());
  if (!spec.is_object()) return LeaseTerm{};
  LeaseTerm t;
  if (auto it = spec.find("holderIdentity"); it != spec.end() && it->is_string()) t.holder = *it;
  if (auto it = spec.find("acquireTime"); it != spec.end() && it->is_string()) t.acquired = *it;
  if (auto it = spec.find("leaseTransitions"); it != spec.end() && it->is_number_integer()) {
    t.transitions = it->get<int64_t>();
  }
  return t;
}

void LeaderFence::Init() {
  absl::StatusOr<LeaseTerm> term = ReadTerm();
  absl::MutexLock lock(&mu_);
  if (term.ok()) {
    listed_under_ = *term;
    spdlog::info("leader fence lease={}/{} holder=\"{}\" transitions={}", ns_, name_, term->holder,
                 term->transitions);
  } else {
    spdlog::warn("leader fence cannot read lease={}/{} error=\"{}\": the first call relists", ns_,
                 name_, std::string(term.status().message()));
  }
}

absl::Status LeaderFence::Admit() {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_.Now();
  const bool quiet = now - last_call_ >= quiet_;
  last_call_ = now;
  if (!quiet && !stale_) return absl::OkStatus();
  stale_ = true;
  absl::StatusOr<LeaseTerm> term = ReadTerm();
  if (term.ok() && listed_under_ && *listed_under_ == *term) {
    stale_ = false;
    return absl::OkStatus();
  }
  // A new term (or one we cannot read: then the safe side): another extender may have bound
  // pods our watch has not shown yet.
  spdlog::info(
      "leader fence: lease term changed lease={}/{} holder=\"{}\", relisting pods "
      "before answering",
      ns_, name_, term.ok() ? term->holder : std::string("?"));
  const absl::Time start = clock_.Now();
  if (absl::Status s = resync_(); !s.ok()) {
    return absl::UnavailableError(
        absl::StrCat("the view could not be listed again after a leader change: ", s.message()));
  }
  ++resyncs_;
  // Unreadable: relisted now, and again after the next quiet spell.
  listed_under_ = term.ok() ? std::optional<LeaseTerm>(*term) : std::nullopt;
  stale_ = false;
  spdlog::info("leader fence: pods relisted in {}", absl::FormatDuration(clock_.Now() - start));
  return absl::OkStatus();
}

int LeaderFence::resyncs() const {
  absl::MutexLock lock(&mu_);
  return resyncs_;
}

}  // namespace neuron::extender
