// File: tests/testing/csi_kubelet.cc
#include "tests/testing/csi_kubelet.h"

#include <chrono>
#include <filesystem>

#include "proto/csi/v1/csi.grpc.pb.h"

namespace neuron::testing {
namespace {

std::unique_ptr<::csi::v1::Node::Stub> Dial(const std::string& socket) {
  return ::csi::v1::Node::NewStub(
      grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
}

void Deadline(grpc::ClientContext& cc) {
  cc.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
}

}  // namespace

grpc::Status CsiPublish(const InlineVolume& v) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(v.target).parent_path(), ec);
  ::csi::v1::NodePublishVolumeRequest req;
  req.set_volume_id(v.volume_id);
  req.set_target_path(v.target);
  req.mutable_volume_capability()->mutable_mount();
  req.mutable_volume_capability()->mutable_access_mode()->set_mode(
      ::csi::v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  auto& ctx = *req.mutable_volume_context();
  for (const auto& [k, val] : v.attributes) ctx[k] = val;
  ctx["csi.storage.k8s.io/pod.name"] = v.pod_name;
  ctx["csi.storage.k8s.io/pod.namespace"] = v.pod_namespace;
  ctx["csi.storage.k8s.io/pod.uid"] = v.pod_uid;
  ctx["csi.storage.k8s.io/serviceAccount.name"] = "default";
  ctx["csi.storage.k8s.io/ephemeral"] = "true";
  grpc::ClientContext cc;
  Deadline(cc);
  ::csi::v1::NodePublishVolumeResponse resp;
  return Dial(v.socket)->NodePublishVolume(&cc, req, &resp);
}

grpc::Status CsiUnpublish(const InlineVolume& v) {
  ::csi::v1::NodeUnpublishVolumeRequest req;
  req.set_volume_id(v.volume_id);
  req.set_target_path(v.target);
  grpc::ClientContext cc;
  Deadline(cc);
  ::csi::v1::NodeUnpublishVolumeResponse resp;
  return Dial(v.socket)->NodeUnpublishVolume(&cc, req, &resp);
}

}  // namespace neuron::testing
