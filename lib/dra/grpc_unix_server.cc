// File: lib/dra/grpc_unix_server.cc
#include "lib/dra/grpc_unix_server.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "lib/dra/unix_socket.h"

namespace neuron::dra {

GrpcUnixServer::GrpcUnixServer(std::string socket_path, std::vector<grpc::Service*> services)
    : socket_path_(std::move(socket_path)), services_(std::move(services)) {}

GrpcUnixServer::~GrpcUnixServer() { Stop(); }

absl::Status GrpcUnixServer::Start() {
  Stop();
  if (absl::Status s = PrepareSocketPath(socket_path_); !s.ok()) return s;
  grpc::ServerBuilder builder;
  int bound_port = 0;  // stays 0 when the listener could not be created
  builder.AddListeningPort("unix:" + socket_path_, grpc::InsecureServerCredentials(), &bound_port);
  for (grpc::Service* s : services_) builder.RegisterService(s);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || bound_port == 0) {
    if (server != nullptr) server->Shutdown();
    return absl::UnavailableError(absl::StrCat("cannot serve gRPC on unix:", socket_path_));
  }
  absl::MutexLock lock(&mu_);
  server_ = std::move(server);
  return absl::OkStatus();
}

void GrpcUnixServer::Stop() {
  std::unique_ptr<grpc::Server> server;
  {
    absl::MutexLock lock(&mu_);
    server = std::move(server_);
  }
  if (server == nullptr) return;
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server->Wait();
  RemoveSocket(socket_path_);
}

bool GrpcUnixServer::running() const {
  absl::MutexLock lock(&mu_);
  return server_ != nullptr;
}

}  // namespace neuron::dra
