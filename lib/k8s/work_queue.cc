#include "lib/k8s/work_queue.h"

#include <algorithm>
#include <cmath>

namespace neuron::k8s {

WorkQueue::WorkQueue(WorkQueueOptions opts)
    : opts_(opts), clock_(opts.clock ? *opts.clock : Clock::Real()) {}

void WorkQueue::AddLocked(const std::string& item) {
  if (shutdown_ || dirty_.count(item)) return;
  dirty_.insert(item);
  if (processing_.count(item)) return;  // re-queued by Done
  queue_.push_back(item);
}

void WorkQueue::Add(const std::string& item) {
  absl::MutexLock lock(&mu_);
  AddLocked(item);
}

void WorkQueue::AddAfter(const std::string& item, absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  if (shutdown_) return;
  if (delay <= absl::ZeroDuration()) {
    AddLocked(item);
    return;
  }
  const absl::Time at = clock_.Now() + delay;
  auto it = delayed_at_.find(item);
  if (it != delayed_at_.end()) {
    if (it->second <= at) return;  // already due earlier
    auto range = delayed_.equal_range(it->second);
    for (auto d = range.first; d != range.second; ++d) {
      if (d->second == item) {
        delayed_.erase(d);
        break;
      }
    }
  }
  delayed_at_[item] = at;
  delayed_.emplace(at, item);
}

absl::Duration WorkQueue::NextBackoff(const std::string& item) const {
  absl::MutexLock lock(&mu_);
  auto it = failures_.find(item);
  const int n = it == failures_.end() ? 0 : it->second;
  const double factor = std::pow(2.0, std::min(n, 62));
  const double secs = absl::ToDoubleSeconds(opts_.base_delay) * factor;
  if (secs >= absl::ToDoubleSeconds(opts_.max_delay)) return opts_.max_delay;
  return absl::Seconds(secs);
}

void WorkQueue::AddRateLimited(const std::string& item) {
  const absl::Duration d = NextBackoff(item);
  {
    absl::MutexLock lock(&mu_);
    ++failures_[item];
  }
  AddAfter(item, d);
}

void WorkQueue::Forget(const std::string& item) {
  absl::MutexLock lock(&mu_);
  failures_.erase(item);
}

int WorkQueue::NumRequeues(const std::string& item) const {
  absl::MutexLock lock(&mu_);
  auto it = failures_.find(item);
  return it == failures_.end() ? 0 : it->second;
}

void WorkQueue::PromoteLocked() {
  const absl::Time now = clock_.Now();
  while (!delayed_.empty() && delayed_.begin()->first <= now) {
    std::string item = delayed_.begin()->second;
    delayed_.erase(delayed_.begin());
    delayed_at_.erase(item);
    AddLocked(item);
  }
}

std::optional<std::string> WorkQueue::GetImpl(std::optional<absl::Duration> timeout) {
  const absl::Time deadline = timeout ? absl::Now() + *timeout : absl::InfiniteFuture();
  absl::MutexLock lock(&mu_);
  while (true) {
    if (shutdown_) return std::nullopt;
    PromoteLocked();
    if (!queue_.empty()) {
      std::string item = std::move(queue_.front());
      queue_.pop_front();
      processing_.insert(item);
      dirty_.erase(item);
      return item;
    }
    const absl::Time now = absl::Now();
    if (now >= deadline) return std::nullopt;
    // Wake for: new items / shutdown (condition), or the next delayed item's time. On the real
    // clock that time is known, so the queue sleeps exactly until then (an idle controller with
    // a 10-minute resync wakes once in 10 minutes); an injected clock may jump at any moment,
    // so it is read again every `poll`.
    absl::Duration wait = deadline - now;
    if (!delayed_.empty()) {
      const absl::Duration until_next =
          std::max(absl::ZeroDuration(), delayed_.begin()->first - clock_.Now());
      wait = std::min(wait, &clock_ == &Clock::Real() ? until_next : opts_.poll);
    }
    auto ready = [this]()
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return shutdown_ || !queue_.empty(); };
    mu_.AwaitWithTimeout(absl::Condition(&ready), wait);
  }
}

std::optional<std::string> WorkQueue::Get() { return GetImpl(std::nullopt); }

std::optional<std::string> WorkQueue::GetFor(absl::Duration timeout) { return GetImpl(timeout); }

void WorkQueue::Done(const std::string& item) {
  absl::MutexLock lock(&mu_);
  processing_.erase(item);
  if (dirty_.count(item) && !shutdown_) queue_.push_back(item);
}

void WorkQueue::ShutDown() {
  absl::MutexLock lock(&mu_);
  shutdown_ = true;
}

bool WorkQueue::shutting_down() const {
  absl::MutexLock lock(&mu_);
  return shutdown_;
}

size_t WorkQueue::Len() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

size_t WorkQueue::DelayedLen() const {
  absl::MutexLock lock(&mu_);
  return delayed_.size();
}

}  // namespace neuron::k8s
