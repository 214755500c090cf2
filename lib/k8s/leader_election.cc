#include "lib/k8s/leader_election.h"

#include "absl/random/distributions.h"
#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/base/random.h"
#include "lib/k8s/errors.h"
#include "lib/k8s/k8s_time.h"
#include "lib/k8s/resource.h"
#include "spdlog/spdlog.h"

namespace neuron::k8s {
namespace {

nlohmann::json Spec(const nlohmann::json& lease) {
  const nlohmann::json* spec = Member(lease, "spec");
  return spec != nullptr && spec->is_object() ? *spec : nlohmann::json::object();
}

std::string Holder(const nlohmann::json& spec) { return spec.value("holderIdentity", ""); }

}  // namespace

LeaderElector::LeaderElector(RestClient& client, LeaderElectionConfig cfg)
    : client_(client),
      cfg_(std::move(cfg)),
      clock_(cfg_.clock ? *cfg_.clock : Clock::Real()),
      rng_(MakeJitterGen(cfg_.seed)) {}

absl::Status LeaderElector::Validate() const {
  if (cfg_.lease_name.empty() || cfg_.lease_namespace.empty() || cfg_.identity.empty()) {
    return absl::InvalidArgumentError("leader election: lease name, namespace, identity required");
  }
  if (cfg_.retry_period <= absl::ZeroDuration() || cfg_.jitter < 0) {
    return absl::InvalidArgumentError("leader election: retry period must be > 0");
  }
  if (cfg_.lease_duration <= cfg_.renew_deadline) {
    return absl::InvalidArgumentError("leader election: leaseDuration must be > renewDeadline");
  }
  if (cfg_.renew_deadline <= cfg_.retry_period * cfg_.jitter) {
    return absl::InvalidArgumentError(
        "leader election: renewDeadline must be > jitter * retryPeriod");
  }
  return absl::OkStatus();
}

std::string LeaderElector::ObservedLeader() const {
  absl::MutexLock lock(&mu_);
  return Holder(Spec(observed_));
}

absl::Duration LeaderElector::Jittered(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  const double unit = absl::Uniform(rng_, 0.0, 1.0);
  return d + d * (unit * cfg_.jitter);  // wait.Jitter(d, 1.2): d + rand*1.2*d
}

bool LeaderElector::Sleep(absl::Duration d) {
  if (stop_.HasBeenNotified()) return false;
  if (&clock_ == &Clock::Real()) return !stop_.WaitForNotificationWithTimeout(d);
  clock_.SleepFor(d);
  return !stop_.HasBeenNotified();
}

void LeaderElector::Stop() {
  if (!stop_called_.exchange(true)) stop_.Notify();
}

// Long on purpose: client-go's acquire-or-renew as one read-decide-write round, so the
// decision and the write it guards read side by side.
bool LeaderElector::TryAcquireOrRenew() {
  const absl::Time now = clock_.Now();
  const std::string now_s = FormatMicroTime(now);
  const int lease_secs = static_cast<int>(absl::ToInt64Seconds(cfg_.lease_duration));
  nlohmann::json spec = {{"holderIdentity", cfg_.identity},
                         {"leaseDurationSeconds", lease_secs},
                         {"acquireTime", now_s},
                         {"renewTime", now_s},
                         {"leaseTransitions", 0}};
  absl::StatusOr<nlohmann::json> got =
      client_.Get(resources::kLeases, cfg_.lease_namespace, cfg_.lease_name);
  if (!got.ok()) {
    if (!absl::IsNotFound(got.status())) {
      spdlog::warn("leader election get failed lease={} error={}", cfg_.lease_name,
                   got.status().ToString());
      return false;
    }
    nlohmann::json lease = {
        {"apiVersion", "coordination.k8s.io/v1"},
        {"kind", "Lease"},
        {"metadata", {{"name", cfg_.lease_name}, {"namespace", cfg_.lease_namespace}}},
        {"spec", spec}};
    absl::StatusOr<nlohmann::json> created =
        client_.Create(resources::kLeases, cfg_.lease_namespace, lease);
    if (!created.ok()) return false;
    absl::MutexLock lock(&mu_);
    observed_ = *created;
    observed_record_ = Spec(*created).dump();
    observed_time_ = now;
    return true;
  }
  const nlohmann::json old = Spec(*got);
  bool expired;
  {
    absl::MutexLock lock(&mu_);
    const std::string rec = old.dump();
    if (rec != observed_record_) {
      observed_record_ = rec;
      observed_time_ = now;
    }
    observed_ = *got;
    const absl::Duration held = absl::Seconds(old.value("leaseDurationSeconds", 0));
    expired = observed_time_ + held <= now;
  }
  const std::string holder = Holder(old);
  if (!holder.empty() && holder != cfg_.identity && !expired) return false;
  if (holder == cfg_.identity) {
    spec["acquireTime"] = old.value("acquireTime", now_s);
    spec["leaseTransitions"] = old.value("leaseTransitions", 0);
  } else {
    spec["leaseTransitions"] = old.value("leaseTransitions", 0) + 1;
  }
  nlohmann::json lease = *got;
  lease["spec"] = spec;  // metadata.resourceVersion stays: stale writes get 409
  absl::StatusOr<nlohmann::json> updated =
      client_.Update(resources::kLeases, cfg_.lease_namespace, lease);
  if (!updated.ok()) {
    spdlog::info("leader election update failed lease={} error={}", cfg_.lease_name,
                 updated.status().ToString());
    return false;
  }
  absl::MutexLock lock(&mu_);
  observed_ = *updated;
  observed_record_ = Spec(*updated).dump();
  observed_time_ = now;
  return true;
}

bool LeaderElector::Release() {
  if (!leader_.load()) return true;
  absl::StatusOr<nlohmann::json> got =
      client_.Get(resources::kLeases, cfg_.lease_namespace, cfg_.lease_name);
  if (!got.ok() || Holder(Spec(*got)) != cfg_.identity) return false;
  const std::string now_s = FormatMicroTime(clock_.Now());
  nlohmann::json lease = *got;
  lease["spec"] = {{"leaseDurationSeconds", 1},
                   {"acquireTime", now_s},
                   {"renewTime", now_s},
                   {"leaseTransitions", Spec(*got).value("leaseTransitions", 0)}};
  absl::StatusOr<nlohmann::json> updated =
      client_.Update(resources::kLeases, cfg_.lease_namespace, lease);
  if (!updated.ok()) return false;
  absl::MutexLock lock(&mu_);
  observed_ = *updated;
  observed_record_ = Spec(*updated).dump();
  observed_time_ = clock_.Now();
  return true;
}

absl::Status LeaderElector::Run() {
  if (absl::Status s = Validate(); !s.ok()) return s;
  auto report = [this] {
    std::string leader = ObservedLeader();
    {
      absl::MutexLock lock(&mu_);
      if (leader == reported_leader_ || leader.empty()) return;
      reported_leader_ = leader;
    }
    if (cfg_.callbacks.on_new_leader) cfg_.callbacks.on_new_leader(leader);
  };
  // Acquire.
  while (true) {
    if (stop_.HasBeenNotified()) return absl::OkStatus();
    const bool ok = TryAcquireOrRenew();
    report();
    if (ok) break;
    if (!Sleep(Jittered(cfg_.retry_period))) return absl::OkStatus();
  }
  leader_.store(true);
  spdlog::info("leader election acquired lease={} identity={}", cfg_.lease_name, cfg_.identity);
  if (cfg_.callbacks.on_started_leading) cfg_.callbacks.on_started_leading();
  // Renew every retry period; give up when no renewal succeeded within renew_deadline.
  bool lost = false;
  while (!stop_.HasBeenNotified()) {
    if (!Sleep(cfg_.retry_period)) break;
    const absl::Time deadline = clock_.Now() + cfg_.renew_deadline;
    bool renewed = false;
    while (!stop_.HasBeenNotified()) {
      renewed = TryAcquireOrRenew();
      report();
      if (renewed || clock_.Now() + cfg_.retry_period > deadline) break;
      if (!Sleep(cfg_.retry_period)) break;
    }
    if (stop_.HasBeenNotified()) break;
    if (!renewed) {
      lost = true;
      break;
    }
  }
  if (!lost && cfg_.release_on_cancel) Release();
  leader_.store(false);
  spdlog::info("leader election stopped leading lease={} identity={} lost={}", cfg_.lease_name,
               cfg_.identity, lost);
  if (cfg_.callbacks.on_stopped_leading) cfg_.callbacks.on_stopped_leading();
  if (lost) return absl::AbortedError("leader election: lease lost");
  return absl::OkStatus();
}

}  // namespace neuron::k8s
