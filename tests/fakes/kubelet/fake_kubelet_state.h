// File: tests/fakes/kubelet/fake_kubelet_state.h
// Internal to the fake kubelet (fake_kubelet.cc: registration and plugin calls;
// fake_kubelet_pods.cc: PodResources, pod admission, the runtime's device check).
#pragma once

#include <grpcpp/grpcpp.h>

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "proto/deviceplugin/v1beta1/api.grpc.pb.h"
#include "proto/podresources/v1/api.pb.h"
#include "tests/fakes/kubelet/fake_kubelet.h"

namespace neuron::fakes {

inline absl::Status FromGrpc(const grpc::Status& s) {
  return s.ok() ? absl::OkStatus()
                : absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

struct Endpoint {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1beta1::DevicePlugin::Stub> stub;
  v1beta1::DevicePluginOptions options;
  std::unique_ptr<grpc::ClientContext> watch_ctx;
  std::thread watcher;
};

struct FakeKubelet::State {
  std::string dir;
  mutable absl::Mutex mu;
  std::vector<v1beta1::RegisterRequest> registrations ABSL_GUARDED_BY(mu);
  std::map<std::string, std::unique_ptr<Endpoint>> endpoints ABSL_GUARDED_BY(mu);
  std::map<std::string, v1beta1::ListAndWatchResponse> latest ABSL_GUARDED_BY(mu);
  std::map<std::string, int> updates ABSL_GUARDED_BY(mu);
  std::map<std::string, bool> open ABSL_GUARDED_BY(mu);
  v1::ListPodResourcesResponse pod_resources ABSL_GUARDED_BY(mu);  // SetPodResources
  // What admitted containers hold: (namespace, pod) -> container -> resource -> IDs.
  using ContainerDevices = std::map<std::string, std::map<std::string, std::vector<std::string>>>;
  std::map<std::pair<std::string, std::string>, ContainerDevices> admitted ABSL_GUARDED_BY(mu);
  v1::AllocatableResourcesResponse allocatable ABSL_GUARDED_BY(mu);
  int list_calls ABSL_GUARDED_BY(mu) = 0;

  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<grpc::Service> registration;
  std::unique_ptr<grpc::Server> pr_server;
  std::unique_ptr<grpc::Service> pr_service;

  // Ends one endpoint's stream and joins its thread. Called without mu held.
  static void Close(std::unique_ptr<Endpoint> ep) {
    if (!ep) return;
    ep->watch_ctx->TryCancel();
    if (ep->watcher.joinable()) ep->watcher.join();
  }

  void Watch(const std::string& resource, Endpoint* ep) {
    v1beta1::Empty empty;
    auto reader = ep->stub->ListAndWatch(ep->watch_ctx.get(), empty);
    {
      absl::MutexLock lock(&mu);
      open[resource] = true;
    }
    v1beta1::ListAndWatchResponse resp;
    while (reader->Read(&resp)) {
      absl::MutexLock lock(&mu);
      latest[resource] = resp;
      ++updates[resource];
    }
    reader->Finish();
    absl::MutexLock lock(&mu);
    open[resource] = false;
  }

  // Validates like the kubelet, dials back, GetDevicePluginOptions, opens ListAndWatch.
  grpc::Status Register(const v1beta1::RegisterRequest& req);

  v1beta1::DevicePlugin::Stub* StubFor(const std::string& resource) {
    absl::MutexLock lock(&mu);
    auto it = endpoints.find(resource);
    return it == endpoints.end() ? nullptr : it->second->stub.get();
  }
};

}  // namespace neuron::fakes
