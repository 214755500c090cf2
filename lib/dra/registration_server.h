// File: lib/dra/registration_server.h
// The plugin side of kubelet plugin registration (pluginregistration.Registration, served on a
// socket in the kubelet's plugins_registry directory). The kubelet's plugin watcher sees the
// socket appear, calls GetInfo, validates the answer, dials `endpoint`, and reports the outcome
// with NotifyRegistrationStatus.
//
//   RegistrationServer reg({"DRAPlugin", "neuron.aws.com",
//   "/var/lib/kubelet/plugins/neuron.aws.com/dra.sock",
//                           {"v1.DRAPlugin", "v1beta1.DRAPlugin"}},
//                          "/var/lib/kubelet/plugins_registry/neuron.aws.com-reg.sock");
//   NEURON_RETURN_IF_ERROR(reg.Start());  // only once the endpoint is already serving
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lib/dra/grpc_unix_server.h"

namespace neuron::dra {

// What GetInfo answers (pluginregistration.PluginInfo).
struct PluginInfo {
  std::string type;  // "DRAPlugin" for DRA drivers
  std::string name;  // the driver name
  // The service socket as the kubelet sees it on the host (not necessarily our own path, when
  // the plugins directory is mounted elsewhere in the container).
  std::string endpoint;
  // For DRA: gRPC service names served at `endpoint`, preferred first ("v1.DRAPlugin").
  std::vector<std::string> supported_versions;
};

class RegistrationServer {
 public:
  RegistrationServer(PluginInfo info, std::string socket_path);
  ~RegistrationServer();
  RegistrationServer(const RegistrationServer&) = delete;
  RegistrationServer& operator=(const RegistrationServer&) = delete;

  // Serves on the socket (replacing a stale one); forgets any earlier kubelet verdict, since a
  // new socket means a new registration. Restartable.
  absl::Status Start();
  void Stop();  // removes the socket
  bool running() const;
  const std::string& socket_path() const;

  // The kubelet's last verdict: OK once it reported plugin_registered, FailedPrecondition with
  // the kubelet's error text when it refused us, Unavailable while it has not reported yet.
  absl::Status status() const;
  // NotifyRegistrationStatus calls received since construction (all Start()s).
  int notifications() const;

  struct State;  // internal; public only for the .cc's service class

 private:
  // Destroyed bottom-up: the server stops before the service and state it uses go away.
  std::unique_ptr<State> state_;
  std::unique_ptr<grpc::Service> service_;
  std::unique_ptr<GrpcUnixServer> server_;
};

}  // namespace neuron::dra
