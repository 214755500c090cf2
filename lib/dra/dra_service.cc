// File: lib/dra/dra_service.cc
// v1 and v1beta1 have identical messages in different packages, so one template serves both.
#include "lib/dra/dra_service.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <set>

#include "absl/strings/str_cat.h"
#include "proto/dra/v1/api.grpc.pb.h"
#include "proto/dra/v1beta1/api.grpc.pb.h"

namespace neuron::dra {
namespace {

// The generated types of one API version, for the template below.
#define NEURON_DRA_PB_TYPES(ns)                                              \
  using DRAPlugin = ns::DRAPlugin;                                           \
  using NodePrepareResourcesRequest = ns::NodePrepareResourcesRequest;       \
  using NodePrepareResourcesResponse = ns::NodePrepareResourcesResponse;     \
  using NodePrepareResourceResponse = ns::NodePrepareResourceResponse;       \
  using NodeUnprepareResourcesRequest = ns::NodeUnprepareResourcesRequest;   \
  using NodeUnprepareResourcesResponse = ns::NodeUnprepareResourcesResponse; \
  using NodeUnprepareResourceResponse = ns::NodeUnprepareResourceResponse;   \
  using Device = ns::Device

struct PbV1 {
  NEURON_DRA_PB_TYPES(k8s::io::kubelet::pkg::apis::dra::v1);
};
struct PbV1beta1 {
  NEURON_DRA_PB_TYPES(k8s::io::kubelet::pkg::apis::dra::v1beta1);
};
#undef NEURON_DRA_PB_TYPES

// Claims the preparer may see: complete and each UID once. Incomplete claims get an error
// entry of their own (keyed by whatever UID they carry) instead of failing the whole call.
template <typename Claims, typename ErrorSink>
std::vector<ClaimRef> ValidClaims(const Claims& claims, ErrorSink&& fail) {
  std::vector<ClaimRef> out;
  std::set<std::string> seen;
  for (const auto& c : claims) {
    if (c.uid().empty() || c.namespace_().empty() || c.name().empty()) {
      fail(c.uid(), absl::StrCat("claim \"", c.namespace_(), "/", c.name(), "\" (uid \"", c.uid(),
                                 "\") lacks namespace, name or uid"));
      continue;
    }
    if (!seen.insert(c.uid()).second) continue;  // repeated claim: one answer per UID
    out.push_back(ClaimRef{c.namespace_(), c.name(), c.uid()});
  }
  return out;
}

std::string ErrorText(const absl::Status& s) {
  return s.message().empty() ? s.ToString() : std::string(s.message());
}

template <typename Pb>
class DraPluginService final : public Pb::DRAPlugin::Service {
 public:
  DraPluginService(ClaimPreparer& preparer, const char* version)
      : preparer_(preparer), version_(version) {}

  grpc::Status NodePrepareResources(grpc::ServerContext*,
                                    const typename Pb::NodePrepareResourcesRequest* req,
                                    typename Pb::NodePrepareResourcesResponse* resp) override {
    auto& out = *resp->mutable_claims();
    const std::vector<ClaimRef> claims = ValidClaims(
        req->claims(), [&](const std::string& uid, std::string err) { out[uid].set_error(err); });
    const PrepareResults results = claims.empty() ? PrepareResults{} : preparer_.Prepare(claims);
    for (const ClaimRef& c : claims) {
      typename Pb::NodePrepareResourceResponse& entry = out[c.uid];
      auto it = results.find(c.uid);
      if (it == results.end()) {
        entry.set_error("internal error: claim was not prepared");
      } else if (!it->second.ok()) {
        entry.set_error(ErrorText(it->second.status()));
      } else {
        for (const PreparedDevice& d : *it->second) {
          typename Pb::Device* dev = entry.add_devices();
          for (const std::string& r : d.request_names) dev->add_request_names(r);
          dev->set_pool_name(d.pool);
          dev->set_device_name(d.device);
          for (const std::string& id : d.cdi_device_ids) dev->add_cdi_device_ids(id);
        }
      }
      LogClaim("prepare", c, entry.error(), entry.devices_size());
    }
    return grpc::Status::OK;
  }

  grpc::Status NodeUnprepareResources(grpc::ServerContext*,
                                      const typename Pb::NodeUnprepareResourcesRequest* req,
                                      typename Pb::NodeUnprepareResourcesResponse* resp) override {
    auto& out = *resp->mutable_claims();
    const std::vector<ClaimRef> claims = ValidClaims(
        req->claims(), [&](const std::string& uid, std::string err) { out[uid].set_error(err); });
    const UnprepareResults results =
        claims.empty() ? UnprepareResults{} : preparer_.Unprepare(claims);
    for (const ClaimRef& c : claims) {
      typename Pb::NodeUnprepareResourceResponse& entry = out[c.uid];
      auto it = results.find(c.uid);
      if (it == results.end()) {
        entry.set_error("internal error: claim was not unprepared");
      } else if (!it->second.ok()) {
        entry.set_error(ErrorText(it->second));
      }
      LogClaim("unprepare", c, entry.error(), 0);
    }
    return grpc::Status::OK;
  }

 private:
  void LogClaim(const char* op, const ClaimRef& c, const std::string& error, int devices) const {
    if (error.empty()) {
      spdlog::info("dra {} api={} claim={}/{} uid={} devices={}", op, version_, c.ns, c.name, c.uid,
                   devices);
    } else {
      spdlog::warn("dra {} failed api={} claim={}/{} uid={} error=\"{}\"", op, version_, c.ns,
                   c.name, c.uid, error);
    }
  }

  ClaimPreparer& preparer_;
  const char* version_;
};

// Spelled like the upstream Go constants (drapb v1/v1beta1 DRAPluginService).
constexpr char kV1Service[] = "v1.DRAPlugin";
constexpr char kV1beta1Service[] = "v1beta1.DRAPlugin";

}  // namespace

std::vector<std::string> DraSupportedVersions() { return {kV1Service, kV1beta1Service}; }

DraServer::DraServer(ClaimPreparer& preparer, std::string socket_path)
    : v1_(std::make_unique<DraPluginService<PbV1>>(preparer, "v1")),
      v1beta1_(std::make_unique<DraPluginService<PbV1beta1>>(preparer, "v1beta1")),
      server_(std::make_unique<GrpcUnixServer>(
          std::move(socket_path), std::vector<grpc::Service*>{v1_.get(), v1beta1_.get()})) {}

DraServer::~DraServer() = default;

absl::Status DraServer::Start() {
  absl::Status s = server_->Start();
  if (s.ok()) spdlog::info("serving dra socket={} api=v1,v1beta1", server_->socket_path());
  return s;
}

void DraServer::Stop() { server_->Stop(); }

bool DraServer::running() const { return server_->running(); }

const std::string& DraServer::socket_path() const { return server_->socket_path(); }

}  // namespace neuron::dra
