// File: lib/csi/csi_server.h
// The CSI gRPC services (csi.v1.Identity and csi.v1.Node) on one unix socket: a node-only plugin
// without stage/unstage, translating NodePublishVolume / NodeUnpublishVolume to NodeVolumes.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "lib/csi/node_volumes.h"
#include "lib/dra/grpc_unix_server.h"

namespace neuron::csi {

struct CsiIdentity {
  std::string driver_name;
  std::string vendor_version;
  std::string node_id;
};

class CsiServer {
 public:
  // `volumes` must outlive the server; it is called from gRPC threads.
  CsiServer(CsiIdentity identity, NodeVolumes& volumes, std::string socket_path);
  ~CsiServer();
  CsiServer(const CsiServer&) = delete;
  CsiServer& operator=(const CsiServer&) = delete;

  absl::Status Start();  // replaces a stale socket; restartable
  void Stop();           // removes the socket
  const std::string& socket_path() const;

 private:
  CsiIdentity identity_data_;
  // Destroyed bottom-up: the server stops before the services it dispatches to go away.
  std::unique_ptr<grpc::Service> identity_;
  std::unique_ptr<grpc::Service> node_;
  std::unique_ptr<dra::GrpcUnixServer> server_;
};

}  // namespace neuron::csi
