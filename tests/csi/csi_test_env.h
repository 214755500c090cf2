// File: tests/csi/csi_test_env.h
// Helpers for the CSI driver tests: a temp tree laid out like a node (kubelet root, a node copy
// of a cache, the driver's state), a VolumeBackend over that node copy, a CsiNodeDriver running
// on its own thread, and a gRPC client that sends what the 1.34 kubelet sends.
#pragma once

#include <grpcpp/grpcpp.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "lib/csi/csi_node_driver.h"
#include "lib/csi/mounter.h"
#include "lib/csi/volume_backend.h"
#include "proto/csi/v1/csi.grpc.pb.h"

namespace neuron::csi::testing {

namespace fs = std::filesystem;

inline std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFile(const fs::path& p, const std::string& content) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << content;
}

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

// A mkdtemp directory under /tmp (short: socket paths must fit sun_path). On destruction any
// mount left below it by a failed test is detached first, so nothing is deleted through a view.
class TempTree {
 public:
  TempTree() {
    std::string tmpl = "/tmp/csi.XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempTree() {
    std::ifstream in("/proc/self/mountinfo");
    std::string line;
    std::vector<std::string> mounts;
    while (std::getline(in, line)) {
      std::istringstream f(line);
      std::string a, b, c, d, mp;
      if (f >> a >> b >> c >> d >> mp && mp.rfind(path_ + "/", 0) == 0) mounts.push_back(mp);
    }
    for (auto it = mounts.rbegin(); it != mounts.rend(); ++it) ::umount2(it->c_str(), MNT_DETACH);
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Serves one node copy directory for every volume; not ready while `not_ready` is set.
class DirBackend final : public VolumeBackend {
 public:
  explicit DirBackend(std::string node_copy) : node_copy_(std::move(node_copy)) {}

  absl::StatusOr<std::string> Acquire(const std::string& volume_id,
                                      const std::map<std::string, std::string>& context) override {
    std::lock_guard<std::mutex> lock(mu_);
    contexts_[volume_id] = context;
    if (!not_ready_.ok()) return not_ready_;
    held_.insert(volume_id);
    ++acquires_;
    return node_copy_;
  }
  void Release(const std::string& volume_id) override {
    std::lock_guard<std::mutex> lock(mu_);
    held_.erase(volume_id);
    released_.push_back(volume_id);
  }

  void SetNotReady(absl::Status s) {
    std::lock_guard<std::mutex> lock(mu_);
    not_ready_ = std::move(s);
  }
  std::set<std::string> held() const {
    std::lock_guard<std::mutex> lock(mu_);
    return held_;
  }
  std::vector<std::string> released() const {
    std::lock_guard<std::mutex> lock(mu_);
    return released_;
  }
  int acquires() const {
    std::lock_guard<std::mutex> lock(mu_);
    return acquires_;
  }
  std::map<std::string, std::string> context(const std::string& volume_id) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = contexts_.find(volume_id);
    return it == contexts_.end() ? std::map<std::string, std::string>{} : it->second;
  }

 private:
  const std::string node_copy_;
  mutable std::mutex mu_;
  absl::Status not_ready_;
  std::set<std::string> held_;
  std::vector<std::string> released_;
  std::map<std::string, std::map<std::string, std::string>> contexts_;
  int acquires_ = 0;
};

// A CsiNodeDriver::Run on its own thread; stopped (as by SIGTERM) on destruction.
class RunningDriver {
 public:
  RunningDriver(CsiDriverOptions opts, VolumeBackend& backend, Mounter& mounter)
      : driver_(std::move(opts), backend, mounter),
        thread_([this] { result_ = driver_.Run(stop_); }) {}
  ~RunningDriver() { Stop().IgnoreError(); }
  absl::Status Stop() {
    if (!stop_.HasBeenNotified()) stop_.Notify();
    if (thread_.joinable()) thread_.join();
    return result_;
  }
  CsiNodeDriver& driver() { return driver_; }

 private:
  CsiNodeDriver driver_;
  absl::Notification stop_;
  absl::Status result_;
  std::thread thread_;
};

// What the kubelet sends for an inline volume of pod ns/name (uid) with our CSIDriver's
// podInfoOnMount: the volumeAttributes plus the csi.storage.k8s.io/* pod fields.
inline ::csi::v1::NodePublishVolumeRequest KubeletPublish(const std::string& volume_id,
                                                          const std::string& target,
                                                          const std::string& pod_name) {
  ::csi::v1::NodePublishVolumeRequest req;
  req.set_volume_id(volume_id);
  req.set_target_path(target);
  req.mutable_volume_capability()->mutable_mount();  // fs_type "", no mount flags
  req.mutable_volume_capability()->mutable_access_mode()->set_mode(
      ::csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  auto& ctx = *req.mutable_volume_context();
  ctx["cache.neuron.aws.com/cache"] = "team/llama";
  ctx["csi.storage.k8s.io/pod.name"] = pod_name;
  ctx["csi.storage.k8s.io/pod.namespace"] = "team";
  ctx["csi.storage.k8s.io/pod.uid"] = "uid-" + pod_name;
  ctx["csi.storage.k8s.io/serviceAccount.name"] = "default";
  ctx["csi.storage.k8s.io/ephemeral"] = "true";
  return req;
}

// A client on a unix socket for one of the generated stubs.
template <typename Service>
std::unique_ptr<typename Service::Stub> Dial(const std::string& socket_path) {
  return Service::NewStub(
      grpc::CreateChannel("unix:" + socket_path, grpc::InsecureChannelCredentials()));
}

inline std::unique_ptr<grpc::ClientContext> Ctx() {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  return ctx;
}

}  // namespace neuron::csi::testing
