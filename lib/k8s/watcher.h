// File: lib/k8s/watcher.h
// The reflector: list, then watch from the list's resourceVersion, resuming from the last seen
// resourceVersion (events and bookmarks) after a normal disconnect or a broken stream; on 410
// Expired (HTTP status or in-stream ERROR event) it relists. Each watch asks the server for a
// random timeoutSeconds in [min_watch_timeout, max_watch_timeout] (client-go: 5-10 min).
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "lib/base/backoff.h"
#include "lib/k8s/rest_client.h"
#include "nlohmann/json.hpp"

namespace neuron::k8s {

struct ReflectorOptions {
  std::string label_selector{};
  std::string field_selector{};
  int64_t page_size = 500;
  absl::Duration min_watch_timeout = absl::Minutes(5);
  absl::Duration max_watch_timeout = absl::Minutes(10);
  // Delay between failed attempts (list errors, broken streams).
  BackoffPolicy backoff{absl::Milliseconds(100), absl::Seconds(30), 2.0, 0.2};
  uint64_t seed = 0;  // 0 = random
};

// Receives what the reflector learns. Called from the reflector's thread only.
class ReflectorSink {
 public:
  virtual ~ReflectorSink() = default;
  // Called on each listed item as its page arrives (before OnReplace), so large lists can be
  // trimmed page by page instead of being held whole. Default: keep as is.
  virtual void TransformListed(nlohmann::json& /*item*/) {}
  // Optional: the parts of each object this sink reads (metadata.resourceVersion among them).
  // Listed pages and watch events are then scanned and each object built only that far
  // (ListOptions::keep, WatchOptions::keep): OnEvent sees objects in the listed shape. Null:
  // whole objects.
  virtual const JsonKeep* ListedFields() const { return nullptr; }
  // A full list: the complete current state (items already passed through TransformListed).
  virtual void OnReplace(std::vector<nlohmann::json> items,
                         const std::string& resource_version) = 0;
  // ADDED / MODIFIED / DELETED (bookmarks are handled by the reflector).
  virtual void OnEvent(WatchEvent& ev) = 0;
};

class Reflector {
 public:
  Reflector(RestClient& client, ResourceRef ref, std::string ns, ReflectorOptions opts,
            ReflectorSink& sink);

  // Runs until Stop(); returns OK then.
  absl::Status Run();
  // Thread-safe; interrupts an open watch or a backoff wait.
  void Stop();
  // Thread-safe: ends the open watch and lists again (a consistent read), and returns once the
  // sink holds a list that began after this call. DeadlineExceeded after `timeout`; Cancelled
  // when stopped first. Used where a watch's lag matters (the extender taking over from
  // another replica).
  absl::Status Relist(absl::Duration timeout);

  std::string last_resource_version() const;
  int lists() const { return lists_.load(); }
  int watches() const { return watches_.load(); }

 private:
  absl::Status ListAndReplace();
  absl::Status WatchOnce();
  bool SleepOrStop(absl::Duration d);  // false if stopped
  bool RelistWanted() const;
  int RandomTimeoutSeconds();

  RestClient& client_;
  const ResourceRef ref_;
  const std::string ns_;
  const ReflectorOptions opts_;
  ReflectorSink& sink_;
  absl::Notification stop_;
  std::atomic<bool> stop_called_{false};
  mutable absl::Mutex mu_;
  std::string rv_ ABSL_GUARDED_BY(mu_);
  // Stop and Relist wake-ups. std::mutex, not absl::Mutex: Debian's Abseil is not built with
  // TSan, which then cannot follow a Condition evaluated by another thread.
  mutable std::mutex wake_mu_;
  std::condition_variable wake_;
  // The open watch's canceller (one per watch: a StreamCanceller stays cancelled).
  std::shared_ptr<StreamCanceller> watch_cancel_;  // guarded by wake_mu_
  bool relist_wanted_ = false;                     // guarded by wake_mu_
  int64_t lists_started_ = 0;                      // guarded by wake_mu_
  int64_t lists_replaced_ = 0;  // guarded by wake_mu_: the last list the sink holds
  absl::InsecureBitGen rng_ ABSL_GUARDED_BY(mu_);  // see lib/base/random.h
  std::atomic<int> lists_{0};
  std::atomic<int> watches_{0};
};

}  // namespace neuron::k8s
