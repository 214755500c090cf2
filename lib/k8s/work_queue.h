// File: lib/k8s/work_queue.h
// A controller work queue (client-go workqueue / controller-runtime semantics) over string keys
// (usually "ns/name"): dedup (an item queued twice is processed once; an item re-added while
// being processed is processed again after Done, once), delayed adds, per-item exponential
// backoff (5 ms .. 1000 s), Forget, shutdown. Time comes from an injectable Clock: on the real
// clock a waiter sleeps until the next delayed item is due; an injected (fake) clock is read
// again every `poll` of real time, since it may jump.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lib/base/clock.h"

namespace neuron::k8s {

struct WorkQueueOptions {
  absl::Duration base_delay = absl::Milliseconds(5);
  absl::Duration max_delay = absl::Seconds(1000);
  absl::Duration poll = absl::Milliseconds(20);  // injected clocks: how often to re-read them
  Clock* clock = nullptr;                        // null = Clock::Real()
};

class WorkQueue {
 public:
  explicit WorkQueue(WorkQueueOptions opts = {});

  void Add(const std::string& item);
  void AddAfter(const std::string& item, absl::Duration delay);
  // AddAfter(item, base_delay * 2^requeues) capped at max_delay; increments requeues.
  void AddRateLimited(const std::string& item);
  // Resets the item's backoff (call after a successful reconcile).
  void Forget(const std::string& item);
  int NumRequeues(const std::string& item) const;
  // The backoff AddRateLimited would use next for `item` (no side effects).
  absl::Duration NextBackoff(const std::string& item) const;

  // Blocks until an item is ready or the queue shuts down (nullopt). The caller must call
  // Done(item) when finished with it.
  std::optional<std::string> Get();
  // As Get, but gives up after `timeout` of real time (nullopt).
  std::optional<std::string> GetFor(absl::Duration timeout);
  void Done(const std::string& item);

  // Stops handing out items; Get returns nullopt once... immediately (queued items are dropped).
  void ShutDown();
  bool shutting_down() const;
  size_t Len() const;         // ready items
  size_t DelayedLen() const;  // items waiting for their time

 private:
  void AddLocked(const std::string& item) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PromoteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<std::string> GetImpl(std::optional<absl::Duration> timeout);

  const WorkQueueOptions opts_;
  Clock& clock_;
  mutable absl::Mutex mu_;
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  std::unordered_set<std::string> dirty_ ABSL_GUARDED_BY(mu_);
  std::unordered_set<std::string> processing_ ABSL_GUARDED_BY(mu_);
  // ready time -> items; plus item -> its earliest ready time (dedup of delayed adds)
  std::multimap<absl::Time, std::string> delayed_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, absl::Time> delayed_at_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, int> failures_ ABSL_GUARDED_BY(mu_);
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace neuron::k8s
