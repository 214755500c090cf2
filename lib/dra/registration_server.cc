// File: lib/dra/registration_server.cc
#include "lib/dra/registration_server.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "lib/dra/grpc_unix_server.h"
#include "proto/pluginregistration/v1/api.grpc.pb.h"

namespace neuron::dra {

struct RegistrationServer::State {
  explicit State(PluginInfo i) : info(std::move(i)) {}

  const PluginInfo info;
  mutable absl::Mutex mu;
  absl::Status verdict ABSL_GUARDED_BY(mu) = NotYetReported();
  int notifications ABSL_GUARDED_BY(mu) = 0;

  static absl::Status NotYetReported() {
    return absl::UnavailableError("kubelet has not reported a registration status yet");
  }

  void Record(const pluginregistration::RegistrationStatus& s) {
    absl::Status latest =
        s.plugin_registered()
            ? absl::OkStatus()
            : absl::FailedPreconditionError(
                  s.error().empty() ? "kubelet refused registration (no reason given)" : s.error());
    if (latest.ok()) {
      spdlog::info("kubelet registered plugin driver={} endpoint={}", info.name, info.endpoint);
    } else {
      spdlog::error("kubelet refused plugin driver={} endpoint={} error=\"{}\"", info.name,
                    info.endpoint, std::string(latest.message()));
    }
    absl::MutexLock lock(&mu);
    verdict = std::move(latest);
    ++notifications;
  }
};

namespace {

class RegistrationService final : public pluginregistration::Registration::Service {
 public:
  explicit RegistrationService(RegistrationServer::State& state) : state_(state) {}

  grpc::Status GetInfo(grpc::ServerContext*, const pluginregistration::InfoRequest*,
                       pluginregistration::PluginInfo* resp) override {
    const PluginInfo& info = state_.info;
    resp->set_type(info.type);
    resp->set_name(info.name);
    resp->set_endpoint(info.endpoint);
    for (const std::string& v : info.supported_versions) resp->add_supported_versions(v);
    spdlog::debug("registration GetInfo driver={} endpoint={} versions={}", info.name,
                  info.endpoint, absl::StrJoin(info.supported_versions, ","));
    return grpc::Status::OK;
  }

  // Answered OK even when the kubelet reports a failure: we received its verdict, and the
  // kubelet ignores our answer then anyway. The failure is logged and kept in status().
  grpc::Status NotifyRegistrationStatus(grpc::ServerContext*,
                                        const pluginregistration::RegistrationStatus* req,
                                        pluginregistration::RegistrationStatusResponse*) override {
    state_.Record(*req);
    return grpc::Status::OK;
  }

 private:
  RegistrationServer::State& state_;
};

}  // namespace

RegistrationServer::RegistrationServer(PluginInfo info, std::string socket_path)
    : state_(std::make_unique<State>(std::move(info))),
      service_(std::make_unique<RegistrationService>(*state_)),
      server_(std::make_unique<GrpcUnixServer>(std::move(socket_path),
                                               std::vector<grpc::Service*>{service_.get()})) {}

RegistrationServer::~RegistrationServer() = default;

absl::Status RegistrationServer::Start() {
  {
    absl::MutexLock lock(&state_->mu);
    state_->verdict = State::NotYetReported();
  }
  absl::Status s = server_->Start();
  if (s.ok()) {
    spdlog::info("serving plugin registration driver={} socket={}", state_->info.name,
                 server_->socket_path());
  }
  return s;
}

void RegistrationServer::Stop() { server_->Stop(); }

bool RegistrationServer::running() const { return server_->running(); }

const std::string& RegistrationServer::socket_path() const { return server_->socket_path(); }

absl::Status RegistrationServer::status() const {
  absl::MutexLock lock(&state_->mu);
  return state_->verdict;
}

int RegistrationServer::notifications() const {
  absl::MutexLock lock(&state_->mu);
  return state_->notifications;
}

}  // namespace neuron::dra
