#include "lib/k8s/watcher.h"

#include "absl/random/distributions.h"
#include "absl/strings/str_cat.h"
#include "lib/base/random.h"
#include "lib/k8s/errors.h"
#include "spdlog/spdlog.h"

namespace neuron::k8s {

Reflector::Reflector(RestClient& client, ResourceRef ref, std::string ns, ReflectorOptions opts,
                     ReflectorSink& sink)
    : client_(client),
      ref_(std::move(ref)),
      ns_(std::move(ns)),
      opts_(std::move(opts)),
      sink_(sink),
      rng_(MakeJitterGen(opts_.seed)) {}

std::string Reflector::last_resource_version() const {
  absl::MutexLock lock(&mu_);
  return rv_;
}

void Reflector::Stop() {
  if (stop_called_.exchange(true)) return;
  stop_.Notify();
  std::lock_guard<std::mutex> lock(wake_mu_);
  if (watch_cancel_) watch_cancel_->Cancel();
  wake_.notify_all();
}

absl::Status Reflector::Relist(absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(wake_mu_);
  const int64_t want = lists_started_ + 1;  // a list already under way may have begun too early
  relist_wanted_ = true;
  if (watch_cancel_) watch_cancel_->Cancel();
  wake_.notify_all();  // out of a backoff wait
  const bool done = wake_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                                   [&] { return lists_replaced_ >= want || stop_called_.load(); });
  if (!done) {
    return absl::DeadlineExceededError(absl::StrCat(
        "relist of ", ref_.resource, " not done within ", absl::FormatDuration(timeout)));
  }
  if (lists_replaced_ < want) return absl::CancelledError("reflector stopped");
  return absl::OkStatus();
}

bool Reflector::RelistWanted() const {
  std::lock_guard<std::mutex> lock(wake_mu_);
  return relist_wanted_;
}

// Also cut short by Relist(): a relist asked for during a backoff must not wait it out.
bool Reflector::SleepOrStop(absl::Duration d) {
  std::unique_lock<std::mutex> lock(wake_mu_);
  wake_.wait_for(lock, absl::ToChronoNanoseconds(d),
                 [&] { return stop_called_.load() || relist_wanted_; });
  return !stop_called_.load();
}

int Reflector::RandomTimeoutSeconds() {
  absl::MutexLock lock(&mu_);
  const int64_t lo = absl::ToInt64Seconds(opts_.min_watch_timeout);
  const int64_t hi = std::max(lo, absl::ToInt64Seconds(opts_.max_watch_timeout));
  return static_cast<int>(
      std::max<int64_t>(1, absl::Uniform<int64_t>(absl::IntervalClosed, rng_, lo, hi)));
}

absl::Status Reflector::ListAndReplace() {
  int64_t index;
  {
    std::lock_guard<std::mutex> lock(wake_mu_);
    relist_wanted_ = false;
    index = ++lists_started_;
  }
  ListOptions lo;
  lo.label_selector = opts_.label_selector;
  lo.field_selector = opts_.field_selector;
  lo.limit = opts_.page_size;
  lo.keep = sink_.ListedFields();
  // Page by page, so the sink can trim each page before the next arrives.
  ListResult all;
  bool first = true;
  while (true) {
    absl::StatusOr<ListResult> page = client_.List(ref_, ns_, lo);
    if (!page.ok()) return page.status();
    if (first) all.resource_version = page->resource_version;
    first = false;
    for (auto& item : page->items) {
      sink_.TransformListed(item);
      all.items.push_back(std::move(item));
    }
    if (page->continue_token.empty()) break;
    lo.continue_token = page->continue_token;
  }
  absl::StatusOr<ListResult> list(std::move(all));
  ++lists_;
  {
    absl::MutexLock lock(&mu_);
    rv_ = list->resource_version;
  }
  spdlog::debug("reflector listed resource={} items={} rv={}", ref_.resource, list->items.size(),
                list->resource_version);
  sink_.OnReplace(std::move(list->items), list->resource_version);
  std::lock_guard<std::mutex> lock(wake_mu_);
  lists_replaced_ = index;
  wake_.notify_all();
  return absl::OkStatus();
}

absl::Status Reflector::WatchOnce() {
  WatchOptions wo;
  wo.label_selector = opts_.label_selector;
  wo.field_selector = opts_.field_selector;
  wo.resource_version = last_resource_version();
  wo.allow_bookmarks = true;
  wo.timeout_seconds = RandomTimeoutSeconds();
  wo.keep = sink_.ListedFields();  // events arrive in the shape the list gave
  auto cancel = std::make_shared<StreamCanceller>();
  {
    std::lock_guard<std::mutex> lock(wake_mu_);
    if (relist_wanted_ || stop_called_.load()) return absl::OkStatus();
    watch_cancel_ = cancel;
  }
  ++watches_;
  absl::Status s = client_.Watch(
      ref_, ns_, wo,
      [this](WatchEvent& ev) {
        if (stop_.HasBeenNotified()) return false;
        std::string rv;
        if (ev.object.contains("metadata") && ev.object["metadata"].is_object()) {
          rv = ev.object["metadata"].value("resourceVersion", "");
        }
        if (ev.type != WatchEventType::kBookmark) sink_.OnEvent(ev);
        if (!rv.empty()) {
          absl::MutexLock lock(&mu_);
          rv_ = rv;
        }
        return true;
      },
      cancel.get());
  std::lock_guard<std::mutex> lock(wake_mu_);
  watch_cancel_.reset();
  return s;
}

absl::Status Reflector::Run() {
  Backoff backoff(opts_.backoff, opts_.seed ? opts_.seed : 42);
  bool need_list = true;
  while (!stop_.HasBeenNotified()) {
    if (need_list) {
      absl::Status s = ListAndReplace();
      if (!s.ok()) {
        spdlog::warn("reflector list failed resource={} error={}", ref_.resource, s.ToString());
        if (!SleepOrStop(backoff.Next())) break;
        continue;
      }
      need_list = false;
      backoff.Reset();
    }
    const absl::Time started = absl::Now();
    absl::Status s = WatchOnce();
    if (stop_.HasBeenNotified()) break;
    if (RelistWanted()) {
      spdlog::info("reflector relisting on request resource={}", ref_.resource);
      need_list = true;
      continue;
    }
    if (IsExpired(s)) {
      spdlog::info("reflector watch expired, relisting resource={} rv={}", ref_.resource,
                   last_resource_version());
      need_list = true;
      continue;
    }
    if (s.ok()) {
      // Normal end (server timeout or EOF): resume. A stream that ended at once is throttled.
      if (absl::Now() - started < absl::Seconds(1)) {
        if (!SleepOrStop(backoff.Next())) break;
      } else {
        backoff.Reset();
      }
      continue;
    }
    spdlog::warn("reflector watch failed resource={} rv={} error={}", ref_.resource,
                 last_resource_version(), s.ToString());
    // A broken stream (connection loss, invalid JSON): the last good event's resourceVersion
    // is still a valid resume point; resume after a backoff.
    if (!SleepOrStop(RetryAfterSeconds(s) ? absl::Seconds(*RetryAfterSeconds(s))
                                          : backoff.Next())) {
      break;
    }
  }
  return absl::OkStatus();
}

}  // namespace neuron::k8s
