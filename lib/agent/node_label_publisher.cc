// File: lib/agent/node_label_publisher.cc
// The patch thread of NodeLabelPublisher (node_label_publisher.h).
#include "lib/agent/node_label_publisher.h"

#include <utility>

#include "lib/agent/ultraserver_labels.h"
#include "lib/k8s/resource.h"
#include "spdlog/spdlog.h"

namespace neuron::agent {

NodeLabelPublisher::NodeLabelPublisher(std::shared_ptr<k8s::RestClient> client,
                                       NodeLabelPublisherOptions opts)
    : client_(std::move(client)), opts_(std::move(opts)) {}

NodeLabelPublisher::~NodeLabelPublisher() { Stop(); }

void NodeLabelPublisher::Set(const std::optional<ultraserver::Identity>& id) {
  nlohmann::json patch = UltraServerLabelPatch(id);
  std::string description = DescribeUltraServerLabels(id);
  absl::MutexLock lock(&mu_);
  desired_ = std::move(patch);
  desired_description_ = std::move(description);
}

void NodeLabelPublisher::Start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
}

void NodeLabelPublisher::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

uint64_t NodeLabelPublisher::patches() const {
  absl::MutexLock lock(&mu_);
  return patches_;
}

uint64_t NodeLabelPublisher::failures() const {
  absl::MutexLock lock(&mu_);
  return failures_;
}

NodeLabelPublisher::Wake NodeLabelPublisher::Next(nlohmann::json& patch, std::string& description) {
  absl::MutexLock lock(&mu_);
  auto due = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stop_ || (desired_.has_value() && desired_ != applied_);
  };
  bool changed = true;
  if (applied_.has_value() && opts_.check_interval > absl::ZeroDuration()) {
    changed = mu_.AwaitWithTimeout(absl::Condition(&due), opts_.check_interval);
  } else {
    mu_.Await(absl::Condition(&due));
  }
  if (stop_) return Wake::kStop;
  patch = *desired_;
  description = desired_description_;
  return changed ? Wake::kChanged : Wake::kCheck;
}

bool NodeLabelPublisher::Drifted(const nlohmann::json& patch) const {
  absl::StatusOr<nlohmann::json> node = client_->Get(k8s::resources::kNodes, "", opts_.node_name);
  if (!node.ok()) {
    spdlog::debug("cannot read the Node to check its UltraServer labels node={} error=\"{}\"",
                  opts_.node_name, node.status().ToString());
    return false;
  }
  if (NodeCarries(*node, patch)) return false;
  spdlog::info("UltraServer node labels changed on the Node by someone else, restoring node={}",
               opts_.node_name);
  return true;
}

void NodeLabelPublisher::Run() {
  Backoff backoff(opts_.backoff);
  nlohmann::json patch;
  std::string description;
  for (;;) {
    const Wake wake = Next(patch, description);
    if (wake == Wake::kStop) return;
    if (wake == Wake::kCheck && !Drifted(patch)) continue;
    const absl::Status s =
        client_->Patch(k8s::resources::kNodes, "", opts_.node_name, k8s::PatchType::kMerge, patch)
            .status();
    absl::MutexLock lock(&mu_);
    if (s.ok()) {
      applied_ = patch;
      ++patches_;
      backoff.Reset();
      spdlog::info("UltraServer node labels published node={} labels=\"{}\"", opts_.node_name,
                   description);
      continue;
    }
    ++failures_;
    if (opts_.on_failure) opts_.on_failure();
    const absl::Duration delay = backoff.Next();
    spdlog::warn("cannot patch UltraServer node labels node={} retry_in={} error=\"{}\"",
                 opts_.node_name, absl::FormatDuration(delay), s.ToString());
    if (mu_.AwaitWithTimeout(absl::Condition(&stop_), delay)) return;
  }
}

}  // namespace neuron::agent
