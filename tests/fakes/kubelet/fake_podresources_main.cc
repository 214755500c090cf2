// File: tests/fakes/kubelet/fake_podresources_main.cc
// A kubelet's PodResources v1 server (List, GetAllocatableResources, Get) as a process, for tests
// that drive real binaries from a script (tests/monitoring/evaluate_with_prometheus.py):
//
//   neuron_fake_podresources --socket=PATH --pods=FILE
//
// FILE holds a ListPodResourcesResponse in protobuf's JSON mapping (the field names of
// proto/podresources/v1/api.proto), e.g.
//   {"podResources": [{"name": "dp-pod", "namespace": "ml", "containers": [{"name": "main",
//     "devices": [{"resourceName": "aws.amazon.com/neuroncore", "deviceIds": ["0", "1"]}],
//     "dynamicResources": [{"claimName": "c", "claimNamespace": "ml", "claimResources":
//       [{"driverName": "neuron.aws.com", "poolName": "node-1", "deviceName":
//       "neurondevice3"}]}]}]}]}
// It is read again on every call, so a script adds and removes pods by rewriting it (atomically:
// temp file + rename). A file that does not parse fails that call with the reason, and the
// process refuses to start on one. GetAllocatableResources answers the device-plugin devices the
// pods hold (a real kubelet lists every allocatable device; what is held is a subset of it).
// Once serving, the socket's path is printed as the first line on stdout. SIGTERM or SIGINT
// stops it (exit 0).
#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "lib/base/flags.h"
#include "lib/base/signals.h"
#include "proto/podresources/v1/api.grpc.pb.h"

namespace neuron::fakes {
namespace {

// The file's pods, or an error naming the file and what is wrong with it.
absl::StatusOr<v1::ListPodResourcesResponse> LoadPods(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError("cannot read pods file " + path);
  std::stringstream text;
  text << in.rdbuf();
  v1::ListPodResourcesResponse pods;
  const auto s = google::protobuf::util::JsonStringToMessage(text.str(), &pods);
  if (!s.ok()) {
    return absl::InvalidArgumentError(
        path + ": not a ListPodResourcesResponse in protobuf JSON: " + std::string(s.message()));
  }
  return pods;
}

class PodResourcesService final : public v1::PodResourcesLister::Service {
 public:
  explicit PodResourcesService(std::string pods_file) : pods_file_(std::move(pods_file)) {}

  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* resp) override {
    absl::StatusOr<v1::ListPodResourcesResponse> pods = Load();
    if (!pods.ok()) return Failed(pods.status());
    *resp = *std::move(pods);
    return grpc::Status::OK;
  }

  grpc::Status GetAllocatableResources(grpc::ServerContext*, const v1::AllocatableResourcesRequest*,
                                       v1::AllocatableResourcesResponse* resp) override {
    absl::StatusOr<v1::ListPodResourcesResponse> pods = Load();
    if (!pods.ok()) return Failed(pods.status());
    for (const v1::PodResources& pod : pods->pod_resources()) {
      for (const v1::ContainerResources& c : pod.containers()) {
        for (const v1::ContainerDevices& d : c.devices()) *resp->add_devices() = d;
      }
    }
    return grpc::Status::OK;
  }

  grpc::Status Get(grpc::ServerContext*, const v1::GetPodResourcesRequest* req,
                   v1::GetPodResourcesResponse* resp) override {
    absl::StatusOr<v1::ListPodResourcesResponse> pods = Load();
    if (!pods.ok()) return Failed(pods.status());
    for (const v1::PodResources& pod : pods->pod_resources()) {
      if (pod.name() == req->pod_name() && pod.namespace_() == req->pod_namespace()) {
        *resp->mutable_pod_resources() = pod;
        return grpc::Status::OK;
      }
    }
    // The kubelet's answer for a pod it does not know.
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "pod " + req->pod_name() + " not found in " + req->pod_namespace());
  }

 private:
  absl::StatusOr<v1::ListPodResourcesResponse> Load() const { return LoadPods(pods_file_); }

  // The caller sees why; so does whoever reads this process's log.
  static grpc::Status Failed(const absl::Status& s) {
    std::fprintf(stderr, "neuron_fake_podresources: %s\n", std::string(s.message()).c_str());
    return grpc::Status(grpc::StatusCode::INTERNAL, std::string(s.message()));
  }

  const std::string pods_file_;
};

int Run(int argc, char** argv) {
  absl::Notification& shutdown = ShutdownOnSignals();
  std::string socket, pods;
  FlagSet flags("neuron_fake_podresources",
                "Serves a kubelet's PodResources v1 API from a JSON file, re-read on every call.");
  flags.String("socket", &socket, "Unix socket to serve on (replaced if present).");
  flags.String("pods", &pods, "ListPodResourcesResponse in protobuf's JSON mapping.");
  if (auto r = flags.Parse(argc, argv); r != FlagSet::kRun) return r == FlagSet::kHelp ? 0 : 2;
  if (socket.empty() || pods.empty()) {
    std::fprintf(stderr, "neuron_fake_podresources: --socket and --pods are required\n");
    return 2;
  }
  if (absl::StatusOr<v1::ListPodResourcesResponse> p = LoadPods(pods); !p.ok()) {
    std::fprintf(stderr, "neuron_fake_podresources: %s\n",
                 std::string(p.status().message()).c_str());
    return 1;
  }
  std::error_code ec;
  std::filesystem::remove(socket, ec);  // a socket left by an earlier run
  PodResourcesService service(pods);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket, grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    std::fprintf(stderr, "neuron_fake_podresources: cannot serve on unix:%s\n", socket.c_str());
    return 1;
  }
  std::printf("%s\n", socket.c_str());
  std::fflush(stdout);
  shutdown.WaitForNotification();
  server->Shutdown();
  std::filesystem::remove(socket, ec);
  return 0;
}

}  // namespace
}  // namespace neuron::fakes

int main(int argc, char** argv) { return neuron::fakes::Run(argc, argv); }
