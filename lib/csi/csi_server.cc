// File: lib/csi/csi_server.cc
#include "lib/csi/csi_server.h"

#include <grpcpp/grpcpp.h>

#include "proto/csi/v1/csi.grpc.pb.h"

namespace neuron::csi {
namespace {

// absl and gRPC share the canonical code numbers, so the backend's code and message (e.g.
// Unavailable "cache ... not extracted yet") reach the kubelet unchanged.
grpc::Status ToGrpc(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

class IdentityService final : public ::csi::v1::Identity::Service {
 public:
  explicit IdentityService(const CsiIdentity& id) : id_(id) {}

  grpc::Status GetPluginInfo(grpc::ServerContext*, const ::csi::v1::GetPluginInfoRequest*,
                             ::csi::v1::GetPluginInfoResponse* resp) override {
    resp->set_name(id_.driver_name);
    resp->set_vendor_version(id_.vendor_version);
    return grpc::Status::OK;
  }
  // No capabilities: no controller service (node-only, attachRequired: false), no topology.
  grpc::Status GetPluginCapabilities(grpc::ServerContext*,
                                     const ::csi::v1::GetPluginCapabilitiesRequest*,
                                     ::csi::v1::GetPluginCapabilitiesResponse*) override {
    return grpc::Status::OK;
  }
  grpc::Status Probe(grpc::ServerContext*, const ::csi::v1::ProbeRequest*,
                     ::csi::v1::ProbeResponse* resp) override {
    resp->mutable_ready()->set_value(true);
    return grpc::Status::OK;
  }

 private:
  const CsiIdentity& id_;
};

class NodeService final : public ::csi::v1::Node::Service {
 public:
  NodeService(const CsiIdentity& id, NodeVolumes& volumes) : id_(id), volumes_(volumes) {}

  grpc::Status NodePublishVolume(grpc::ServerContext*,
                                 const ::csi::v1::NodePublishVolumeRequest* req,
                                 ::csi::v1::NodePublishVolumeResponse*) override {
    PublishRequest r;
    r.volume_id = req->volume_id();
    r.target_path = req->target_path();
    r.block = req->volume_capability().has_block();
    r.has_mount = req->volume_capability().has_mount();
    r.readonly = req->readonly();
    r.context.insert(req->volume_context().begin(), req->volume_context().end());
    return ToGrpc(volumes_.Publish(r));
  }
  grpc::Status NodeUnpublishVolume(grpc::ServerContext*,
                                   const ::csi::v1::NodeUnpublishVolumeRequest* req,
                                   ::csi::v1::NodeUnpublishVolumeResponse*) override {
    return ToGrpc(volumes_.Unpublish(req->volume_id(), req->target_path()));
  }
  // None: no STAGE_UNSTAGE (the kubelet then skips NodeStageVolume), no stats, no mount group.
  grpc::Status NodeGetCapabilities(grpc::ServerContext*,
                                   const ::csi::v1::NodeGetCapabilitiesRequest*,
                                   ::csi::v1::NodeGetCapabilitiesResponse*) override {
    return grpc::Status::OK;
  }
  // The kubelet calls this while registering us and writes node_id into the CSINode object.
  grpc::Status NodeGetInfo(grpc::ServerContext*, const ::csi::v1::NodeGetInfoRequest*,
                           ::csi::v1::NodeGetInfoResponse* resp) override {
    resp->set_node_id(id_.node_id);
    return grpc::Status::OK;
  }

 private:
  const CsiIdentity& id_;
  NodeVolumes& volumes_;
};

}  // namespace

CsiServer::CsiServer(CsiIdentity identity, NodeVolumes& volumes, std::string socket_path)
    : identity_data_(std::move(identity)) {
  identity_ = std::make_unique<IdentityService>(identity_data_);
  node_ = std::make_unique<NodeService>(identity_data_, volumes);
  server_ = std::make_unique<dra::GrpcUnixServer>(
      std::move(socket_path), std::vector<grpc::Service*>{identity_.get(), node_.get()});
}

CsiServer::~CsiServer() { server_.reset(); }

absl::Status CsiServer::Start() { return server_->Start(); }
void CsiServer::Stop() { server_->Stop(); }
const std::string& CsiServer::socket_path() const { return server_->socket_path(); }

}  // namespace neuron::csi
