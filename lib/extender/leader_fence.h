// File: lib/extender/leader_fence.h
// Two scheduler replicas run, each with its own extender beside it listening on loopback; only
// the leader's kube-scheduler calls its extender. Both extenders keep a warm view from their
// watches, but a watch trails the API server: the binds the old leader's extender wrote just
// before a handover may not have reached the new leader's view, which would then hand out the
// same Neuron IDs again. The fence closes that gap without a call per request:
//   - a replica that is being called steadily leads the same term: answered at once;
//   - the first call after a quiet spell (a standby's first call as leader is always one) reads
//     the scheduler's Lease; if its term (holder, acquire time, transitions) differs from the
//     one the view was last listed under, the pods are listed again (a consistent read) and the
//     call waits for that list before it is answered. Calls that arrive meanwhile wait too.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lib/base/clock.h"
#include "lib/k8s/rest_client.h"

namespace neuron::extender {

// One leadership term of a coordination.k8s.io Lease.
struct LeaseTerm {
  std::string holder;
  std::string acquired;  // spec.acquireTime
  int64_t transitions = 0;
  bool operator==(const LeaseTerm&) const = default;
};

// "<namespace>/<name>" -> {namespace, name}; InvalidArgument otherwise.
absl::StatusOr<std::pair<std::string, std::string>> ParseLeaseName(const std::string& s);

class LeaderFence {
 public:
  using Resync = std::function<absl::Status()>;
  // `quiet`: a gap between calls this long makes the next call check the Lease. A standby is
  // never called, and a handover takes at least the scheduler's retryPeriod (2 s by default).
  LeaderFence(k8s::RestClient& client, std::string lease_ns, std::string lease_name, Resync resync,
              Clock* clock = nullptr, absl::Duration quiet = absl::Seconds(1));

  // Before the view's first list: the term that list is fresh for.
  void Init();
  // Before answering a call of kube-scheduler. Unavailable when the view could not be listed
  // again (kube-scheduler then retries the pod).
  absl::Status Admit();

  int resyncs() const;

 private:
  absl::StatusOr<LeaseTerm> ReadTerm();

  k8s::RestClient& client_;
  const std::string ns_, name_;
  Resync resync_;
  Clock& clock_;
  const absl::Duration quiet_;
  mutable absl::Mutex mu_;  // held across the Lease read and the relist: callers wait for both
  absl::Time last_call_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool stale_ ABSL_GUARDED_BY(mu_) = false;                     // the last check did not finish
  std::optional<LeaseTerm> listed_under_ ABSL_GUARDED_BY(mu_);  // nullopt: unknown
  int resyncs_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace neuron::extender
