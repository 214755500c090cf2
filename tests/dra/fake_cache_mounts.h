// File: tests/dra/fake_cache_mounts.h
// A CacheMounts for DRA tests: each claim's "view" is a real directory under the given root
// (created by Prepare, removed by Release), with errors to inject and the calls it saw.
// Thread-safe: the end-to-end test's kubelet calls arrive on gRPC threads.
#pragma once

#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/dra/cache_mounts.h"

namespace neuron::dra::testing {

class FakeCacheMounts final : public CacheMounts {
 public:
  explicit FakeCacheMounts(std::string root) : root_(std::move(root)) {}

  absl::StatusOr<std::string> Prepare(const CacheMountRequest& r) override {
    std::lock_guard<std::mutex> lock(mu_);
    prepares_.push_back(r);
    if (!prepare_error_.ok()) return prepare_error_;
    if (!host_dir_.empty()) return host_dir_;
    const std::filesystem::path dir = std::filesystem::path(root_) / "views" / r.claim_uid;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return absl::InternalError(ec.message());
    std::ofstream(dir / "cache-name") << r.cache_name;
    return dir.string();
  }

  absl::Status Release(const std::string& claim_uid) override {
    std::lock_guard<std::mutex> lock(mu_);
    releases_.push_back(claim_uid);
    if (!release_error_.ok()) return release_error_;
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(root_) / "views" / claim_uid, ec);
    return absl::OkStatus();
  }

  // The view Prepare made for the claim.
  std::string ViewDir(const std::string& claim_uid) const {
    return (std::filesystem::path(root_) / "views" / claim_uid).string();
  }
  bool HasView(const std::string& claim_uid) const {
    return std::filesystem::is_directory(ViewDir(claim_uid));
  }
  void FailPrepare(absl::Status s) {
    std::lock_guard<std::mutex> lock(mu_);
    prepare_error_ = std::move(s);
  }
  void FailRelease(absl::Status s) {
    std::lock_guard<std::mutex> lock(mu_);
    release_error_ = std::move(s);
  }
  // Prepare answers this directory instead of making one ("" = make one).
  void AnswerDir(std::string dir) {
    std::lock_guard<std::mutex> lock(mu_);
    host_dir_ = std::move(dir);
  }
  std::vector<CacheMountRequest> prepares() const {
    std::lock_guard<std::mutex> lock(mu_);
    return prepares_;
  }
  std::vector<std::string> releases() const {
    std::lock_guard<std::mutex> lock(mu_);
    return releases_;
  }

 private:
  const std::string root_;
  mutable std::mutex mu_;
  absl::Status prepare_error_;
  absl::Status release_error_;
  std::string host_dir_;
  std::vector<CacheMountRequest> prepares_;
  std::vector<std::string> releases_;
};

}  // namespace neuron::dra::testing
