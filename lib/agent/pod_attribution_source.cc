// File: lib/agent/pod_attribution_source.cc
// PodResources List over gRPC and the keep-or-drop rules of the last answer.
#include "lib/agent/pod_attribution_source.h"

#include <grpcpp/grpcpp.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "proto/podresources/v1/api.grpc.pb.h"
#include "spdlog/spdlog.h"

namespace neuron::agent {
namespace {

// The kubelet's own limit for PodResources messages (podresources.DefaultMaxMsgSize): a node
// with many pods exceeds gRPC's 4 MiB default.
constexpr int kMaxMessageBytes = 16 * 1024 * 1024;

}  // namespace

std::string ResolvePodResourcesSocket(const std::string& flag, const std::string& kubelet_dir) {
  if (flag != kPodResourcesSocketUnderKubeletDir) return flag;
  std::string dir = kubelet_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return absl::StrCat(dir, "/pod-resources/kubelet.sock");
}

absl::StatusOr<v1::ListPodResourcesResponse> ListPodResources(const std::string& socket,
                                                              absl::Duration deadline) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  // A private subchannel: channels to one target otherwise share one, and with it the reconnect
  // backoff (up to 2 minutes) of a kubelet that was down.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto stub = v1::PodResourcesLister::NewStub(grpc::CreateCustomChannel(
      absl::StrCat("unix:", socket), grpc::InsecureChannelCredentials(), args));
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  v1::ListPodResourcesResponse resp;
  const grpc::Status s = stub->List(&ctx, v1::ListPodResourcesRequest(), &resp);
  if (!s.ok()) {
    return absl::Status(
        static_cast<absl::StatusCode>(s.error_code()),
        absl::StrCat("PodResources List on unix:", socket, ": ", s.error_message()));
  }
  return resp;
}

PodAttributionSource::PodAttributionSource(PodAttributionSourceOptions options, Clock& clock)
    : options_(std::move(options)), clock_(clock) {}

void PodAttributionSource::Poll(const NodeLayout& layout) {
  Apply(ListPodResources(options_.socket, options_.deadline), layout);
}

void PodAttributionSource::Apply(const absl::StatusOr<v1::ListPodResourcesResponse>& reply,
                                 const NodeLayout& layout) {
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  if (reply.ok()) {
    last_ = AttributePods(*reply, layout);
    last_success_ = now;
    if (!up_) {
      spdlog::info("pod attribution: PodResources List works socket={} pods={} cores={}",
                   options_.socket, reply->pod_resources_size(), last_.cores.size());
    }
    up_ = true;
    polled_ = true;
    LogProblems(last_);
    return;
  }
  ++list_errors_;
  if (up_ || !polled_) {
    spdlog::warn(
        "pod attribution: PodResources List failed socket={} error=\"{}\"; the last answer is "
        "kept for one more interval, then dropped (logged again when List works)",
        options_.socket, std::string(reply.status().message()));
  }
  up_ = false;
  polled_ = true;
  if (!Fresh(now) && !last_.cores.empty()) {
    spdlog::info("pod attribution: dropped the last answer (cores={}): older than two intervals",
                 last_.cores.size());
    last_ = PodAttribution();
  }
}

AllocationSnapshot PodAttributionSource::Snapshot() const {
  const absl::Time now = clock_.Now();
  absl::ReaderMutexLock lock(&mu_);
  AllocationSnapshot out;
  out.up = up_;
  out.list_errors = list_errors_;
  if (Fresh(now)) {
    out.cores = last_.cores;
    out.ignored_entries = last_.problems_total;
  }
  return out;
}

bool PodAttributionSource::Fresh(absl::Time now) const {
  return now - last_success_ < 2 * options_.interval;
}

// Once per distinct list of problems: the same bad entry is in every reply until its pod ends.
void PodAttributionSource::LogProblems(const PodAttribution& a) {
  if (a.problems == logged_problems_) return;
  logged_problems_ = a.problems;
  if (a.problems.empty()) return;
  spdlog::warn("pod attribution: {} PodResources entries ignored: {}", a.problems_total,
               absl::StrJoin(a.problems, "; "));
}

}  // namespace neuron::agent
