// File: lib/deviceplugin/pod_resources.cc
// PodResources v1 client.
#include "lib/deviceplugin/pod_resources.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "proto/podresources/v1/api.grpc.pb.h"

namespace neuron::deviceplugin {

absl::StatusOr<std::vector<PodHoldings>> ListPodHoldings(const std::string& socket) {
  auto stub = v1::PodResourcesLister::NewStub(
      grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::ListPodResourcesRequest req;
  v1::ListPodResourcesResponse resp;
  grpc::Status s = stub->List(&ctx, req, &resp);
  if (!s.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                        absl::StrCat("pod-resources List on ", socket, ": ", s.error_message()));
  }
  std::vector<PodHoldings> out;
  for (const v1::PodResources& pod : resp.pod_resources()) {
    PodHoldings h{pod.namespace_(), pod.name(), {}};
    for (const v1::ContainerResources& c : pod.containers()) {
      for (const v1::ContainerDevices& d : c.devices()) {
        std::optional<ResourceKind> kind = ParseResourceKind(d.resource_name());
        if (!kind) continue;
        for (const std::string& id : d.device_ids()) {
          absl::StatusOr<int> n = ParseId(id);
          if (n.ok()) h.ids[*kind].push_back(*n);
        }
      }
    }
    if (!h.ids.empty()) out.push_back(std::move(h));
  }
  return out;
}

}  // namespace neuron::deviceplugin
