// File: lib/dra/slice_sync.cc
#include "lib/dra/slice_sync.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

namespace neuron::dra {

SliceSync::SliceSync(SlicePublisher& publisher, Builder build, SliceSyncOptions options)
    : publisher_(publisher),
      build_(std::move(build)),
      options_(std::move(options)),
      backoff_(options_.retry) {}

SliceSync::~SliceSync() { Stop(); }

void SliceSync::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    resync_at_ = absl::Now() + options_.resync;
  }
  worker_ = std::thread([this] { Loop(); });
}

void SliceSync::Trigger() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    dirty_ = true;
  }
  wake_.notify_one();
}

void SliceSync::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (worker_.joinable()) worker_.join();
}

bool SliceSync::published() const {
  std::lock_guard<std::mutex> lock(mu_);
  return published_;
}

void SliceSync::Loop() {
  bool resync = false;
  while (WaitForWork(&resync)) Attempt(resync);
}

bool SliceSync::WaitForWork(bool* resync) {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    const absl::Time now = absl::Now();
    if (stopping_) return false;
    *resync = now >= resync_at_;
    if (dirty_ || *resync || now >= retry_at_) {
      dirty_ = false;
      retry_at_ = absl::InfiniteFuture();
      return true;
    }
    // Woken by Trigger/Stop, else at the next deadline (the loop re-checks either way).
    const absl::Time deadline = std::min(retry_at_, resync_at_);
    if (deadline == absl::InfiniteFuture()) {
      wake_.wait(lock, [this] { return dirty_ || stopping_; });
    } else {
      wake_.wait_for(lock, absl::ToChronoNanoseconds(deadline - now),
                     [this] { return dirty_ || stopping_; });
    }
  }
}

void SliceSync::Attempt(bool resync) {
  if (resync) publisher_.Invalidate();
  absl::StatusOr<std::vector<ResourceSliceModel>> slices = build_();
  absl::Status status = slices.status();
  if (slices.ok()) status = publisher_.Publish(*slices);
  const int64_t generation = publisher_.pool_generation();
  if (options_.on_publish) options_.on_publish(status, generation);
  std::lock_guard<std::mutex> lock(mu_);
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
