// File: tests/fakes/kubelet/fake_kubelet_pods.cc
// The fake kubelet's pod side: admission with per-resource accounting, the container runtime's
// device check, and the PodResources v1 service reporting what was admitted.
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "proto/podresources/v1/api.grpc.pb.h"
#include "tests/fakes/kubelet/fake_kubelet.h"
#include "tests/fakes/kubelet/fake_kubelet_state.h"

namespace neuron::fakes {
namespace {

// containerd resolves DeviceSpec.host_path on the host with lstat and accepts only device
// nodes (oci.DeviceFromPath); the kubelet reports the failure as CreateContainerError.
absl::Status RuntimeDeviceCheck(const v1beta1::AllocateResponse& resp) {
  for (const auto& c : resp.container_responses()) {
    for (const auto& d : c.devices()) {
      struct stat st {};
      if (::lstat(d.host_path().c_str(), &st) != 0) {
        return absl::FailedPreconditionError(absl::StrCat(
            "CreateContainerError: lstat ", d.host_path(), ": ", std::strerror(errno)));
      }
      if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
        return absl::FailedPreconditionError(
            absl::StrCat("CreateContainerError: ", d.host_path(), ": not a device node"));
      }
    }
  }
  return absl::OkStatus();
}

bool NumericLess(const std::string& a, const std::string& b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

class PodResourcesService final : public v1::PodResourcesLister::Service {
 public:
  explicit PodResourcesService(FakeKubelet::State& s) : s_(s) {}
  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* resp) override {
    absl::MutexLock lock(&s_.mu);
    ++s_.list_calls;
    *resp = s_.pod_resources;
    for (const auto& [key, containers] : s_.admitted) {
      v1::PodResources* pod = resp->add_pod_resources();
      pod->set_namespace_(key.first);
      pod->set_name(key.second);
      for (const auto& [name, resources] : containers) {
        v1::ContainerResources* c = pod->add_containers();
        c->set_name(name);
        for (const auto& [resource, ids] : resources) {
          v1::ContainerDevices* d = c->add_devices();
          d->set_resource_name(resource);
          for (const std::string& id : ids) d->add_device_ids(id);
        }
      }
    }
    return grpc::Status::OK;
  }
  grpc::Status GetAllocatableResources(grpc::ServerContext*, const v1::AllocatableResourcesRequest*,
                                       v1::AllocatableResourcesResponse* resp) override {
    absl::MutexLock lock(&s_.mu);
    *resp = s_.allocatable;
    return grpc::Status::OK;
  }

 private:
  FakeKubelet::State& s_;
};

}  // namespace

absl::StatusOr<v1beta1::AllocateResponse> FakeKubelet::AllocateFor(
    const ContainerRef& c, const std::string& resource, const std::vector<std::string>& ids) {
  v1beta1::AllocateRequest req;
  auto* cr = req.add_container_requests();
  for (const std::string& id : ids) cr->add_devices_ids(id);
  absl::StatusOr<v1beta1::AllocateResponse> resp = Allocate(resource, req);
  if (!resp.ok()) {
    return absl::Status(
        resp.status().code(),
        absl::StrCat("UnexpectedAdmissionError: Allocate failed due to ", resp.status().message()));
  }
  {
    absl::MutexLock lock(&state_->mu);
    state_->admitted[{c.ns, c.pod}][c.container][resource] = ids;
  }
  if (absl::Status s = RuntimeDeviceCheck(*resp); !s.ok()) return s;
  return resp;
}

absl::StatusOr<v1beta1::AllocateResponse> FakeKubelet::Admit(const ContainerRef& c,
                                                             const std::string& resource,
                                                             int count) {
  std::optional<v1beta1::ListAndWatchResponse> list = LatestDevices(resource);
  if (!list) return absl::FailedPreconditionError("resource not registered");
  const std::vector<std::string> held = Held(resource);
  std::vector<std::string> available;
  for (const auto& d : list->devices()) {
    if (d.health() == "Healthy" &&
        !std::binary_search(held.begin(), held.end(), d.id(), NumericLess)) {
      available.push_back(d.id());
    }
  }
  if (count > static_cast<int>(available.size())) {
    return absl::ResourceExhaustedError(
        absl::StrCat("UnexpectedAdmissionError: requested number of devices unavailable for ",
                     resource, ". Requested: ", count, ", Available: ", available.size()));
  }
  std::vector<std::string> chosen;
  std::optional<v1beta1::DevicePluginOptions> opts = options(resource);
  if (opts && opts->get_preferred_allocation_available()) {
    v1beta1::PreferredAllocationRequest req;
    auto* cr = req.add_container_requests();
    for (const std::string& id : available) cr->add_available_deviceids(id);
    cr->set_allocation_size(count);
    absl::StatusOr<v1beta1::PreferredAllocationResponse> pref =
        GetPreferredAllocation(resource, req);
    if (!pref.ok()) return pref.status();  // an RPC error fails admission
    if (pref->container_responses_size() > 0) {
      for (const std::string& id : pref->container_responses(0).deviceids()) {
        const bool ok = std::find(available.begin(), available.end(), id) != available.end() &&
                        std::find(chosen.begin(), chosen.end(), id) == chosen.end();
        if (ok && static_cast<int>(chosen.size()) < count) chosen.push_back(id);
      }
    }
  }
  for (const std::string& id : available) {  // a short answer: the kubelet fills the rest
    if (static_cast<int>(chosen.size()) >= count) break;
    if (std::find(chosen.begin(), chosen.end(), id) == chosen.end()) chosen.push_back(id);
  }
  return AllocateFor(c, resource, chosen);
}

void FakeKubelet::RemovePod(const std::string& ns, const std::string& pod) {
  absl::MutexLock lock(&state_->mu);
  state_->admitted.erase({ns, pod});
}

std::vector<std::string> FakeKubelet::Held(const std::string& resource) const {
  absl::MutexLock lock(&state_->mu);
  std::vector<std::string> out;
  for (const auto& [key, containers] : state_->admitted) {
    for (const auto& [name, resources] : containers) {
      auto it = resources.find(resource);
      if (it != resources.end()) out.insert(out.end(), it->second.begin(), it->second.end());
    }
  }
  std::sort(out.begin(), out.end(), NumericLess);
  return out;
}

absl::Status FakeKubelet::StartPodResources() {
  if (state_->pr_server) return absl::OkStatus();
  std::filesystem::create_directories(dir_ + "/pod-resources");
  ::unlink(pod_resources_socket().c_str());
  auto service = std::make_unique<PodResourcesService>(*state_);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + pod_resources_socket(), grpc::InsecureServerCredentials());
  builder.RegisterService(service.get());
  state_->pr_server = builder.BuildAndStart();
  if (!state_->pr_server) return absl::UnavailableError("fake kubelet: cannot serve pod-resources");
  state_->pr_service = std::move(service);
  return absl::OkStatus();
}

void FakeKubelet::SetPodResources(const v1::ListPodResourcesResponse& resp) {
  absl::MutexLock lock(&state_->mu);
  state_->pod_resources = resp;
}

void FakeKubelet::SetAllocatable(const v1::AllocatableResourcesResponse& resp) {
  absl::MutexLock lock(&state_->mu);
  state_->allocatable = resp;
}

int FakeKubelet::pod_resources_list_calls() const {
  absl::MutexLock lock(&state_->mu);
  return state_->list_calls;
}

}  // namespace neuron::fakes
