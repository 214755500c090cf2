// File: lib/deviceplugin/pod_resources.cc
// PodResources v1 client (ListPodHoldings) and the pure reply conversion.
#include "lib/deviceplugin/pod_resources.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "absl/strings/str_cat.h"
#include "proto/podresources/v1/api.grpc.pb.h"

namespace neuron::deviceplugin {

std::vector<PodHoldings> HoldingsFromList(const v1::ListPodResourcesResponse& reply) {
  std::vector<PodHoldings> out;
  for (const v1::PodResources& pod : reply.pod_resources()) {
    // One entry per pod even if the reply repeats one: two plans for the same pod would fight.
    auto h = std::find_if(out.begin(), out.end(), [&](const PodHoldings& p) {
      return p.ns == pod.namespace_() && p.name == pod.name();
    });
    if (h == out.end()) h = out.insert(out.end(), PodHoldings{pod.namespace_(), pod.name(), {}});
    for (const v1::ContainerResources& c : pod.containers()) {
      for (const v1::ContainerDevices& d : c.devices()) {
        std::optional<assignment::ResourceKind> kind =
            assignment::ParseResourceKind(d.resource_name());
        if (!kind) continue;
        for (const std::string& id : d.device_ids()) {
          absl::StatusOr<int> n = assignment::ParseId(id);
          if (n.ok()) h->ids[*kind].push_back(*n);
        }
      }
    }
  }
  // A duplicate would end up in AWS_NEURON_IDS, which ParseIdList (the extender) rejects.
  for (PodHoldings& h : out) {
    for (auto& [kind, ids] : h.ids) {
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    }
  }
  std::erase_if(out, [](const PodHoldings& h) { return h.ids.empty(); });
  return out;
}

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
  return HoldingsFromList(resp);
}

}  // namespace neuron::deviceplugin
