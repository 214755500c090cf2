// File: lib/dra/slice_sync.cc
#include "lib/dra/slice_sync.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace neuron::dra {

SliceSync::SliceSync(SlicePublisher& publisher, Builder build, SliceSyncOptions options)
    : publisher_(publisher),
      build_(std::move(build)),
      options_(std::move(options)),
      backoff_(options_.retry) {}

SliceSync::~SliceSync() { Stop(); }

void SliceSync::Start() {
  {
    absl::MutexLock lock(&mu_);
    resync_at_ = absl::Now() + options_.resync;
  }
  worker_ = std::thread([this] { Loop(); });
}

void SliceSync::Trigger() {
  absl::MutexLock lock(&mu_);
  dirty_ = true;
}

void SliceSync::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (worker_.joinable()) worker_.join();
}

bool SliceSync::published() const {
  absl::MutexLock lock(&mu_);
  return published_;
}

bool SliceSync::Woken() const { return dirty_ || stopping_; }

void SliceSync::Loop() {
  bool resync = false;
  while (WaitForWork(&resync)) Attempt(resync);
}

bool SliceSync::WaitForWork(bool* resync) {
  absl::MutexLock lock(&mu_);
  while (true) {
    const absl::Time now = absl::Now();
    if (stopping_) return false;
    *resync = now >= resync_at_;
    if (dirty_ || *resync || now >= retry_at_) {
      dirty_ = false;
      retry_at_ = absl::InfiniteFuture();
      return true;
    }
    // Woken by Trigger/Stop through the condition, else at the next deadline.
    const absl::Time deadline = std::min(retry_at_, resync_at_);
    mu_.AwaitWithDeadline(absl::Condition(this, &SliceSync::Woken), deadline);
  }
}

void SliceSync::Attempt(bool resync) {
  if (resync) publisher_.Invalidate();
  absl::StatusOr<std::vector<ResourceSliceModel>> slices = build_();
  absl::Status status = slices.status();
  if (slices.ok()) status = publisher_.Publish(*slices);
  const int64_t generation = publisher_.pool_generation();
  if (options_.on_publish) options_.on_publish(status, generation);
  absl::MutexLock lock(&mu_);
  if (resync) resync_at_ = absl::Now() + options_.resync;
  if (status.ok()) {
    if (!published_) spdlog::info("resource slices published generation={}", generation);
    published_ = true;
    backoff_.Reset();
    return;
  }
  const absl::Duration delay = backoff_.Next();
  retry_at_ = absl::Now() + delay;
  spdlog::warn("publishing resource slices failed, retrying retry_in={} error=\"{}\"",
               absl::FormatDuration(delay), std::string(status.message()));
}

}  // namespace neuron::dra
