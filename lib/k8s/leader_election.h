// File: lib/k8s/leader_election.h
// Lease-based leader election with client-go semantics (tools/leaderelection): defaults 15 s
// lease, 10 s renew deadline, 2 s retry period, retries jittered by 1.2; another holder's lease
// is expired when leaseDurationSeconds have passed on OUR clock since we last saw the record
// change (renewTime is not trusted: clock skew); leaseTransitions counts holder changes; a clean
// release writes leaseDurationSeconds=1 and clears the holder. Times are MicroTime.
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "lib/base/clock.h"
#include "lib/k8s/rest_client.h"
#include "nlohmann/json.hpp"

namespace neuron::k8s {

struct LeaderCallbacks {
  std::function<void()> on_started_leading;  // runs on the elector thread: do not block
  std::function<void()> on_stopped_leading;
  std::function<void(const std::string& identity)> on_new_leader;
};

struct LeaderElectionConfig {
  std::string lease_namespace{};
  std::string lease_name{};
  std::string identity{};
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
  double jitter = 1.2;  // acquire retries wait retry_period * (1 + rand * jitter)... see .cc
  bool release_on_cancel = true;
  LeaderCallbacks callbacks{};
  Clock* clock = nullptr;  // null = Clock::Real()
  uint64_t seed = 0;
};

class LeaderElector {
 public:
  LeaderElector(RestClient& client, LeaderElectionConfig cfg);

  // InvalidArgument unless lease_duration > renew_deadline > jitter * retry_period, etc.
  absl::Status Validate() const;
  // Campaigns, then leads, until Stop() or loss of the lease; if leadership was lost (not
  // stopped) it returns and the caller decides (client-go: exit). Releases on Stop when
  // release_on_cancel. Returns OK after Stop, Aborted after losing the lease.
  absl::Status Run();
  void Stop();

  bool IsLeader() const { return leader_.load(); }
  std::string ObservedLeader() const;

  // One acquire-or-renew attempt (exposed for tests); true if we hold the lease afterwards.
  bool TryAcquireOrRenew();
  // Writes the release record if we hold the lease.
  bool Release();

 private:
  // Sleeps `d` on the clock, in slices, returning false as soon as Stop() was called.
  bool Sleep(absl::Duration d);
  absl::Duration Jittered(absl::Duration d);

  RestClient& client_;
  const LeaderElectionConfig cfg_;
  Clock& clock_;
  absl::Notification stop_;
  std::atomic<bool> stop_called_{false};
  std::atomic<bool> leader_{false};
  mutable absl::Mutex mu_;
  nlohmann::json observed_ ABSL_GUARDED_BY(mu_);      // last lease object seen
  std::string observed_record_ ABSL_GUARDED_BY(mu_);  // its spec, serialised, to detect change
  absl::Time observed_time_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::string reported_leader_ ABSL_GUARDED_BY(mu_);
  absl::InsecureBitGen rng_ ABSL_GUARDED_BY(mu_);  // see lib/base/random.h
};

}  // namespace neuron::k8s
