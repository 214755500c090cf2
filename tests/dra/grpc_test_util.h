// File: tests/dra/grpc_test_util.h
// Helpers for the DRA gRPC / registration tests: a scriptable ClaimPreparer and a
// KubeletPlugin running on its own thread against a FakeDraKubelet's directories.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "lib/dra/claim_preparer.h"
#include "lib/dra/kubelet_plugin.h"
#include "tests/fakes/kubelet/dra_fake_kubelet.h"

namespace neuron::dra::testing {

// Answers from a script keyed by claim UID; claims without a script get one device
// "neurondevice0" in pool "node-a" with CDI ID "neuron.aws.com/device=neurondevice0".
// A scripted Omit() leaves the claim out of the result map.
class ScriptedPreparer final : public ClaimPreparer {
 public:
  static absl::Status Omit() { return absl::Status(absl::StatusCode::kAborted, "omit"); }

  void Script(const std::string& uid, absl::StatusOr<std::vector<PreparedDevice>> result) {
    absl::MutexLock lock(&mu_);
    prepare_[uid] = std::move(result);
  }
  void ScriptUnprepare(const std::string& uid, absl::Status result) {
    absl::MutexLock lock(&mu_);
    unprepare_[uid] = std::move(result);
  }

  PrepareResults Prepare(const std::vector<ClaimRef>& claims) override {
    absl::MutexLock lock(&mu_);
    prepare_calls_.push_back(claims);
    PrepareResults out;
    for (const ClaimRef& c : claims) {
      auto it = prepare_.find(c.uid);
      if (it == prepare_.end()) {
        out.emplace(c.uid,
                    std::vector<PreparedDevice>{PreparedDevice{
                        {}, "node-a", "neurondevice0", {"neuron.aws.com/device=neurondevice0"}}});
      } else if (it->second.status() != Omit()) {
        out.emplace(c.uid, it->second);
      }
    }
    return out;
  }

  UnprepareResults Unprepare(const std::vector<ClaimRef>& claims) override {
    absl::MutexLock lock(&mu_);
    unprepare_calls_.push_back(claims);
    UnprepareResults out;
    for (const ClaimRef& c : claims) {
      auto it = unprepare_.find(c.uid);
      if (it == unprepare_.end()) {
        out.emplace(c.uid, absl::OkStatus());
      } else if (it->second != Omit()) {
        out.emplace(c.uid, it->second);
      }
    }
    return out;
  }

  std::vector<std::vector<ClaimRef>> prepare_calls() const {
    absl::MutexLock lock(&mu_);
    return prepare_calls_;
  }
  std::vector<std::vector<ClaimRef>> unprepare_calls() const {
    absl::MutexLock lock(&mu_);
    return unprepare_calls_;
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, absl::StatusOr<std::vector<PreparedDevice>>> prepare_;
  std::map<std::string, absl::Status> unprepare_;
  std::vector<std::vector<ClaimRef>> prepare_calls_;
  std::vector<std::vector<ClaimRef>> unprepare_calls_;
};

// Options pointing a KubeletPlugin at the fake kubelet's directories, with a fast check.
inline KubeletPluginOptions OptionsFor(const fakes::FakeDraKubelet& kubelet) {
  KubeletPluginOptions o;
  o.registrar_dir = kubelet.registrar_dir();
  o.plugins_dir = kubelet.plugins_dir();
  o.check_interval = absl::Milliseconds(200);
  return o;
}

// A KubeletPlugin::Run on its own thread; stopped (as by SIGTERM) on destruction.
class RunningPlugin {
 public:
  RunningPlugin(KubeletPluginOptions opts, ClaimPreparer& preparer)
      : plugin_(std::move(opts), preparer), thread_([this] { result_ = plugin_.Run(stop_); }) {}
  ~RunningPlugin() { Stop().IgnoreError(); }

  // Returns Run()'s result.
  absl::Status Stop() {
    if (!stop_.HasBeenNotified()) stop_.Notify();
    if (thread_.joinable()) thread_.join();
    return result_;
  }
  KubeletPlugin& plugin() { return plugin_; }

 private:
  KubeletPlugin plugin_;
  absl::Notification stop_;
  absl::Status result_;
  std::thread thread_;
};

}  // namespace neuron::dra::testing

namespace neuron::dra::testing {

// Polls `pred` every 10 ms until it holds or `timeout` passes.
template <typename Pred>
bool Eventually(Pred pred, absl::Duration timeout = absl::Seconds(10)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!pred()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return true;
}

}  // namespace neuron::dra::testing
