// File: tests/fakes/kubelet/dra_fake_kubelet_calls.cc
// The cm/dra half: NodePrepareResources / NodeUnprepareResources with the chosen service, and
// the kubelet's checks of the answer (pkg/kubelet/cm/dra/manager.go).
#include <set>

#include "absl/strings/str_cat.h"
#include "proto/dra/v1/api.grpc.pb.h"
#include "proto/dra/v1beta1/api.grpc.pb.h"
#include "tests/fakes/kubelet/dra_fake_kubelet.h"
#include "tests/fakes/kubelet/dra_fake_kubelet_state.h"

namespace neuron::fakes {
namespace {

// The generated types of one API version, for the templates below.
#define NEURON_FAKE_DRA_PB_TYPES(ns)                                       \
  using DRAPlugin = ns::DRAPlugin;                                         \
  using NodePrepareResourcesRequest = ns::NodePrepareResourcesRequest;     \
  using NodePrepareResourcesResponse = ns::NodePrepareResourcesResponse;   \
  using NodeUnprepareResourcesRequest = ns::NodeUnprepareResourcesRequest; \
  using NodeUnprepareResourcesResponse = ns::NodeUnprepareResourcesResponse

struct PbV1 {
  NEURON_FAKE_DRA_PB_TYPES(k8s::io::kubelet::pkg::apis::dra::v1);
};
struct PbV1beta1 {
  NEURON_FAKE_DRA_PB_TYPES(k8s::io::kubelet::pkg::apis::dra::v1beta1);
};
#undef NEURON_FAKE_DRA_PB_TYPES

absl::Status FromGrpcStatus(const grpc::Status& s) {
  return s.ok() ? absl::OkStatus()
                : absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

// defaultClientCallTimeout in pkg/kubelet/cm/dra/plugin.
constexpr absl::Duration kCallTimeout = absl::Seconds(45);

template <typename Request>
Request ClaimsRequest(const std::vector<DraClaim>& claims) {
  Request req;
  for (const DraClaim& c : claims) {
    auto* out = req.add_claims();
    out->set_namespace_(c.ns);
    out->set_name(c.name);
    out->set_uid(c.uid);
  }
  return req;
}

// manager.go: every UID in the answer must be one we asked for, and none may be missing.
template <typename Map>
absl::Status CheckAnswer(const char* rpc, const std::vector<DraClaim>& claims, const Map& got) {
  std::set<std::string> asked;
  for (const DraClaim& c : claims) asked.insert(c.uid);
  for (const auto& [uid, unused] : got) {
    if (asked.count(uid) == 0) {
      return absl::InternalError(absl::StrCat(rpc, " returned result for unknown claim UID ", uid));
    }
  }
  if (got.size() != asked.size()) {
    return absl::InternalError(
        absl::StrCat(rpc, " skipped ", asked.size() - got.size(), " ResourceClaims"));
  }
  return absl::OkStatus();
}

template <typename Pb>
absl::StatusOr<std::map<std::string, DraPrepared>> Prepare(
    const std::shared_ptr<grpc::Channel>& channel, const std::vector<DraClaim>& claims) {
  auto stub = Pb::DRAPlugin::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + kCallTimeout));
  typename Pb::NodePrepareResourcesResponse resp;
  grpc::Status s = stub->NodePrepareResources(
      &ctx, ClaimsRequest<typename Pb::NodePrepareResourcesRequest>(claims), &resp);
  if (!s.ok()) {
    absl::Status st = FromGrpcStatus(s);
    return absl::Status(st.code(), absl::StrCat("NodePrepareResources: ", st.message()));
  }
  if (absl::Status st = CheckAnswer("NodePrepareResources", claims, resp.claims()); !st.ok()) {
    return st;
  }
  std::map<std::string, DraPrepared> out;
  for (const auto& [uid, result] : resp.claims()) {
    DraPrepared& p = out[uid];
    p.error = result.error();
    for (const auto& d : result.devices()) {
      p.devices.push_back(DraDevice{{d.request_names().begin(), d.request_names().end()},
                                    d.pool_name(),
                                    d.device_name(),
                                    {d.cdi_device_ids().begin(), d.cdi_device_ids().end()}});
    }
  }
  return out;
}

template <typename Pb>
absl::StatusOr<std::map<std::string, std::string>> Unprepare(
    const std::shared_ptr<grpc::Channel>& channel, const std::vector<DraClaim>& claims) {
  auto stub = Pb::DRAPlugin::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + kCallTimeout));
  typename Pb::NodeUnprepareResourcesResponse resp;
  grpc::Status s = stub->NodeUnprepareResources(
      &ctx, ClaimsRequest<typename Pb::NodeUnprepareResourcesRequest>(claims), &resp);
  if (!s.ok()) {
    absl::Status st = FromGrpcStatus(s);
    return absl::Status(st.code(), absl::StrCat("NodeUnprepareResources: ", st.message()));
  }
  if (absl::Status st = CheckAnswer("NodeUnprepareResources", claims, resp.claims()); !st.ok()) {
    return st;
  }
  std::map<std::string, std::string> out;
  for (const auto& [uid, result] : resp.claims()) out[uid] = result.error();
  return out;
}

// Which generated client to use: the forced one, else the service chosen at registration.
absl::StatusOr<bool> UseV1(const DraPlugin& p, DraApi api) {
  if (api == DraApi::kV1) return true;
  if (api == DraApi::kV1beta1) return false;
  if (p.reg.chosen_service == "v1.DRAPlugin") return true;
  if (p.reg.chosen_service == "v1beta1.DRAPlugin") return false;
  return absl::InternalError(
      absl::StrCat("internal error: unsupported chosen service: \"", p.reg.chosen_service, "\""));
}

absl::Status NotRegistered(const std::string& driver) {
  return absl::FailedPreconditionError(absl::StrCat("DRA driver ", driver, " is not registered"));
}

}  // namespace

absl::StatusOr<std::map<std::string, DraPrepared>> FakeDraKubelet::NodePrepareResources(
    const std::string& driver, const std::vector<DraClaim>& claims, DraApi api) {
  std::shared_ptr<DraPlugin> p = state_->Find(driver);
  if (p == nullptr) return NotRegistered(driver);
  absl::StatusOr<bool> v1 = UseV1(*p, api);
  if (!v1.ok()) return v1.status();
  return *v1 ? Prepare<PbV1>(p->channel, claims) : Prepare<PbV1beta1>(p->channel, claims);
}

absl::StatusOr<std::map<std::string, std::string>> FakeDraKubelet::NodeUnprepareResources(
    const std::string& driver, const std::vector<DraClaim>& claims, DraApi api) {
  std::shared_ptr<DraPlugin> p = state_->Find(driver);
  if (p == nullptr) return NotRegistered(driver);
  absl::StatusOr<bool> v1 = UseV1(*p, api);
  if (!v1.ok()) return v1.status();
  return *v1 ? Unprepare<PbV1>(p->channel, claims) : Unprepare<PbV1beta1>(p->channel, claims);
}

}  // namespace neuron::fakes
