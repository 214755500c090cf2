// File: lib/dra/slice_sync.h
// Keeps the node's ResourceSlices current on a worker thread of its own: Trigger() (called from
// the inventory watcher's change callback, which must not block) wakes the worker, which builds
// the slices from the latest inventory and publishes them. Triggers arriving while a publish
// runs coalesce into one more publish, so a burst of health changes costs at most two.
//   - a failed build or publish is retried with backoff (a new Trigger retries at once);
//   - every `resync` the publisher is invalidated and the slices re-published, repairing edits
//     or deletions by others (SlicePublisher makes no request when nothing changed otherwise).
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/base/backoff.h"
#include "lib/dra/resource_slice.h"
#include "lib/dra/slice_publisher.h"

namespace neuron::dra {

struct SliceSyncOptions {
  absl::Duration resync = absl::Minutes(10);
  BackoffPolicy retry{absl::Milliseconds(500), absl::Seconds(30), 2.0, 0.2};
  // Called on the worker after every attempt with its outcome and the pool generation.
  std::function<void(const absl::Status&, int64_t generation)> on_publish;
};

class SliceSync {
 public:
  using Builder = std::function<absl::StatusOr<std::vector<ResourceSliceModel>>()>;
  // `publisher` must outlive this object.
  SliceSync(SlicePublisher& publisher, Builder build, SliceSyncOptions options = {});
  ~SliceSync();  // Stop()
  SliceSync(const SliceSync&) = delete;
  SliceSync& operator=(const SliceSync&) = delete;

  // Starts the worker; it publishes at once.
  void Start();
  // Asks for a publish as soon as the worker is free. Never blocks on the API.
  void Trigger();
  // Joins the worker (a publish in flight finishes first). The slices stay on the server.
  void Stop();

  // True once a publish succeeded (readiness).
  bool published() const;

 private:
  void Loop();
  // Waits for a trigger, a due retry or resync, or Stop; false on Stop.
  bool WaitForWork(bool* resync);
  void Attempt(bool resync);

  SlicePublisher& publisher_;
  const Builder build_;
  const SliceSyncOptions options_;
  std::thread worker_;

  // std::mutex, not absl::Mutex, so ThreadSanitizer sees the locking (Debian's Abseil is not
  // built with TSan) and this worker runs under it. Everything below is guarded by mu_.
  mutable std::mutex mu_;
  std::condition_variable wake_;  // Trigger and Stop
  bool dirty_ = true;             // the first round publishes
  bool stopping_ = false;
  bool published_ = false;
  absl::Time retry_at_ = absl::InfiniteFuture();
  absl::Time resync_at_ = absl::InfiniteFuture();
  Backoff backoff_;
};

}  // namespace neuron::dra
