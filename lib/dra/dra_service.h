// File: lib/dra/dra_service.h
// The kubelet's DRA gRPC service (DRAPlugin: NodePrepareResources, NodeUnprepareResources),
// served in both API versions on one unix socket: v1 (kubelet 1.34+) and v1beta1 (kubelets
// 1.32/1.33). Both translate to the one ClaimPreparer; neither decides anything itself.
//
//   DraServer dra(preparer, "/var/lib/kubelet/plugins/neuron.aws.com/dra.sock");
//   NEURON_RETURN_IF_ERROR(dra.Start());  // before the registration socket appears
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lib/dra/claim_preparer.h"
#include "lib/dra/grpc_unix_server.h"

namespace neuron::dra {

// PluginInfo.supported_versions for what DraServer serves, preferred first. The 1.34 kubelet
// takes the first entry it knows; 1.32/1.33 kubelets look for "v1beta1.DRAPlugin".
std::vector<std::string> DraSupportedVersions();

class DraServer {
 public:
  // `preparer` must outlive the server; it is called from gRPC threads.
  DraServer(ClaimPreparer& preparer, std::string socket_path);
  ~DraServer();
  DraServer(const DraServer&) = delete;
  DraServer& operator=(const DraServer&) = delete;

  absl::Status Start();  // replaces a stale socket; restartable
  void Stop();           // removes the socket
  bool running() const;
  const std::string& socket_path() const;

 private:
  // Destroyed bottom-up: the server stops before the services it dispatches to go away.
  std::unique_ptr<grpc::Service> v1_;
  std::unique_ptr<grpc::Service> v1beta1_;
  std::unique_ptr<GrpcUnixServer> server_;
};

}  // namespace neuron::dra
