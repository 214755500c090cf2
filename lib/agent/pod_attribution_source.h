// File: lib/agent/pod_attribution_source.h
// Keeps the node's pod attribution (pod_attribution.h) fresh: the owner calls Poll() once per
// interval (the agent's scan loop, right before it renders /metrics), which asks the kubelet's
// PodResources v1 List over its unix socket with a deadline.
//
// Staleness: a failed List keeps the last good answer for one more interval (a kubelet restart
// or one slow reply does not blank the pods), then drops it, so a pod that ended while the
// kubelet was unreachable leaves no series behind; a successful List without a pod drops the
// pod at once. Errors are logged once per change of state (working, failing), not per poll.
//
//   PodAttributionSource source({.socket = "/var/lib/kubelet/pod-resources/kubelet.sock"},
//                               Clock::Real());
//   source.Poll(NodeLayoutFrom(inventory));  // every interval
//   AllocationSnapshot now = source.Snapshot();
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lib/agent/pod_attribution.h"
#include "lib/base/clock.h"
#include "proto/podresources/v1/api.pb.h"

namespace neuron::agent {

// --pod-resources-socket's default, as --help shows it: the socket under --kubelet-dir.
inline constexpr char kPodResourcesSocketUnderKubeletDir[] =
    "<kubelet-dir>/pod-resources/kubelet.sock";

// The socket to ask: `flag` as given, or for kPodResourcesSocketUnderKubeletDir the kubelet's own
// path under `kubelet_dir`, so a kubelet with another --root-dir needs one flag, not two.
std::string ResolvePodResourcesSocket(const std::string& flag, const std::string& kubelet_dir);

// One PodResources v1 List on the unix socket `socket`, failing after `deadline`. A fresh
// channel per call, so a restarted kubelet is reached at the next call (no reconnect backoff).
absl::StatusOr<v1::ListPodResourcesResponse> ListPodResources(const std::string& socket,
                                                              absl::Duration deadline);

struct PodAttributionSourceOptions {
  std::string socket;                          // unix socket path
  absl::Duration interval = absl::Seconds(5);  // how often the owner calls Poll()
  absl::Duration deadline = absl::Seconds(2);  // per List; keep it well under the interval
};

// What the allocation collector exports.
struct AllocationSnapshot {
  std::vector<CoreAllocation> cores;  // empty while no answer is fresh enough
  bool up = false;                    // the latest List succeeded
  uint64_t list_errors = 0;           // failed List calls since start
  int ignored_entries = 0;            // entries of the answer in use that name no core here
};

class PodAttributionSource {
 public:
  PodAttributionSource(PodAttributionSourceOptions options, Clock& clock);

  // One List, converted against `layout`. Thread-safe with Snapshot().
  void Poll(const NodeLayout& layout);
  // Polls with a reply obtained elsewhere (`reply` not OK = a failed List); what Poll() does
  // after its call. Tests drive the staleness rules through it with a fake clock.
  void Apply(const absl::StatusOr<v1::ListPodResourcesResponse>& reply, const NodeLayout& layout);
  // The answer to export now: the last good one while it is younger than two intervals.
  AllocationSnapshot Snapshot() const;

 private:
  bool Fresh(absl::Time now) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void LogProblems(const PodAttribution& a) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const PodAttributionSourceOptions options_;
  Clock& clock_;
  mutable absl::Mutex mu_;
  PodAttribution last_ ABSL_GUARDED_BY(mu_);
  absl::Time last_success_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool up_ ABSL_GUARDED_BY(mu_) = false;
  bool polled_ ABSL_GUARDED_BY(mu_) = false;  // at least one Apply: state changes are logged
  uint64_t list_errors_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> logged_problems_ ABSL_GUARDED_BY(mu_);
};

}  // namespace neuron::agent
