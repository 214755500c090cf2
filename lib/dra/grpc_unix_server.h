// File: lib/dra/grpc_unix_server.h
// A gRPC server on one unix socket that can be stopped and started again (the socket may be
// deleted under us and must then be re-created). The services are owned by the caller and must
// outlive the server. Only .cc files include gRPC server headers; this one forward-declares.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace grpc {
class Server;
class Service;
}  // namespace grpc

namespace neuron::dra {

class GrpcUnixServer {
 public:
  GrpcUnixServer(std::string socket_path, std::vector<grpc::Service*> services);
  ~GrpcUnixServer();  // Stop()
  GrpcUnixServer(const GrpcUnixServer&) = delete;
  GrpcUnixServer& operator=(const GrpcUnixServer&) = delete;

  // Stops a running instance, removes a stale socket, listens and serves on gRPC's threads.
  absl::Status Start();
  // Shuts down (in-flight calls get up to 2 s) and removes the socket file. Idempotent.
  void Stop();
  bool running() const;
  const std::string& socket_path() const { return socket_path_; }

 private:
  const std::string socket_path_;
  const std::vector<grpc::Service*> services_;
  mutable absl::Mutex mu_;
  std::unique_ptr<grpc::Server> server_ ABSL_GUARDED_BY(mu_);
};

}  // namespace neuron::dra
