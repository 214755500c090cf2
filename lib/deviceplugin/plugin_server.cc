// File: lib/deviceplugin/plugin_server.cc
#include "lib/deviceplugin/plugin_server.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "proto/deviceplugin/v1beta1/api.grpc.pb.h"

namespace neuron::deviceplugin {
namespace {

grpc::Status ToGrpc(const absl::Status& s) {  // same google.rpc.Code numbering
  return s.ok() ? grpc::Status::OK
                : grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

template <typename Repeated>
std::vector<std::string> ToVector(const Repeated& r) {
  return std::vector<std::string>(r.begin(), r.end());
}

// One open ListAndWatch stream in the streams gauge, for its lifetime.
class StreamCount {
 public:
  StreamCount(PluginMetrics* m, assignment::ResourceKind kind) : metrics_(m), kind_(kind) {
    if (metrics_ != nullptr) metrics_->StreamOpened(kind_);
  }
  ~StreamCount() {
    if (metrics_ != nullptr) metrics_->StreamClosed(kind_);
  }
  StreamCount(const StreamCount&) = delete;
  StreamCount& operator=(const StreamCount&) = delete;

 private:
  PluginMetrics* metrics_;
  assignment::ResourceKind kind_;
};

}  // namespace

// State shared by the service and the owner; outlives each gRPC server instance.
struct PluginServer::Impl {
  Impl(const Allocator& a, const DeviceSource& s, AllocationHints* h, std::function<void()> f,
       SiliconLedger* l)
      : allocator(a), source(s), hints(h), on_allocated(std::move(f)), ledger(l) {}

  const Allocator& allocator;
  const DeviceSource& source;
  AllocationHints* hints;
  std::function<void()> on_allocated;
  SiliconLedger* ledger;
  PluginMetrics* metrics = nullptr;  // set before serving
  IdentityFn identity;               // set before serving; empty: no UltraServer env

  // The UltraServer environment for a container given `ids`: empty for a pod of no group (or
  // without API access); an error when the pod's placement disagrees with this node.
  absl::StatusOr<EnvList> UltraServerEnvFor(const NodeSnapshot& node,
                                            const std::vector<std::string>& ids) const {
    if (hints == nullptr || !identity) return EnvList{};
    absl::StatusOr<std::vector<int>> parsed = allocator.ParseIds(node, ids);
    if (!parsed.ok()) return EnvList{};
    std::optional<std::map<std::string, std::string>> pod =
        hints->PendingPodFor(allocator.kind(), *parsed);
    if (!pod || !HasPlacement(*pod)) return EnvList{};
    return UltraServerEnv(*pod, identity());
  }

  // `available` without IDs whose device is held through the other resource (must_include
  // stays: the kubelet already chose those). Unparseable IDs pass through for Preferred to
  // reject.
  std::vector<std::string> FreeSilicon(const NodeSnapshot& node,
                                       const std::vector<std::string>& available,
                                       const std::vector<std::string>& must_include) const {
    if (ledger == nullptr) return available;
    const std::map<int, std::string> held = ledger->HeldByOther(allocator.kind(), node);
    if (held.empty()) return available;
    std::vector<std::string> out;
    for (const std::string& s : available) {
      absl::StatusOr<int> id = assignment::ParseId(s);
      const bool keep =
          !id.ok() || held.count(DeviceOf(allocator.kind(), *id, node)) == 0 ||
          std::find(must_include.begin(), must_include.end(), s) != must_include.end();
      if (keep) out.push_back(s);
    }
    return out;
  }

  mutable absl::Mutex mu;
  uint64_t generation ABSL_GUARDED_BY(mu) = 1;
  bool stopping ABSL_GUARDED_BY(mu) = false;
  std::unique_ptr<grpc::Server> server ABSL_GUARDED_BY(mu);
  std::unique_ptr<grpc::Service> service ABSL_GUARDED_BY(mu);

  v1beta1::ListAndWatchResponse BuildList() const {
    v1beta1::ListAndWatchResponse resp;
    for (const AdvertisedDevice& d : allocator.Devices(source.Snapshot())) {
      v1beta1::Device* dev = resp.add_devices();
      dev->set_id(d.id);
      dev->set_health(d.healthy ? "Healthy" : "Unhealthy");
      if (d.numa_node >= 0) dev->mutable_topology()->add_nodes()->set_id(d.numa_node);
    }
    return resp;
  }
};

namespace {

class DevicePluginService final : public v1beta1::DevicePlugin::Service {
 public:
  explicit DevicePluginService(PluginServer::Impl& impl) : impl_(impl) {}

  grpc::Status GetDevicePluginOptions(grpc::ServerContext*, const v1beta1::Empty*,
                                      v1beta1::DevicePluginOptions* resp) override {
    resp->set_pre_start_required(false);
    resp->set_get_preferred_allocation_available(true);
    return grpc::Status::OK;
  }

  grpc::Status ListAndWatch(grpc::ServerContext* ctx, const v1beta1::Empty*,
                            grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) override {
    const std::string resource = assignment::ResourceName(impl_.allocator.kind());
    StreamCount counted(impl_.metrics, impl_.allocator.kind());
    uint64_t sent_generation = 0;
    bool sent_any = false;
    std::string last;
    while (true) {
      {
        absl::MutexLock lock(&impl_.mu);
        auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(impl_.mu) {
          return impl_.stopping || impl_.generation != sent_generation;
        };
        // Wake at least every 500 ms to notice a cancelled stream (kubelet gone).
        impl_.mu.AwaitWithTimeout(absl::Condition(&ready), absl::Milliseconds(500));
        if (impl_.stopping) break;
        if (ctx->IsCancelled()) return grpc::Status::CANCELLED;
        if (impl_.generation == sent_generation) continue;
        sent_generation = impl_.generation;
      }
      v1beta1::ListAndWatchResponse resp = impl_.BuildList();
      std::string bytes = resp.SerializeAsString();
      if (sent_any && bytes == last) continue;  // health flapped back before we sent
      if (!writer->Write(resp)) return grpc::Status::CANCELLED;
      sent_any = true;
      spdlog::debug("listandwatch sent resource={} devices={}", resource, resp.devices_size());
      last = std::move(bytes);
    }
    return grpc::Status::OK;
  }

  grpc::Status GetPreferredAllocation(grpc::ServerContext*,
                                      const v1beta1::PreferredAllocationRequest* req,
                                      v1beta1::PreferredAllocationResponse* resp) override {
    if (req->container_requests_size() == 0) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no container_requests");
    }
    const NodeSnapshot node = impl_.source.Snapshot();
    for (const v1beta1::ContainerPreferredAllocationRequest& c : req->container_requests()) {
      std::optional<std::vector<int>> hint;
      if (impl_.hints != nullptr) {
        hint = impl_.hints->HintFor(impl_.allocator.kind(), c.allocation_size());
      }
      const std::vector<std::string> must = ToVector(c.must_include_deviceids());
      const std::vector<std::string> all = ToVector(c.available_deviceids());
      const std::vector<std::string> avail = impl_.FreeSilicon(node, all, must);
      int size = c.allocation_size();
      if (avail.size() < all.size()) {
        // Choose among free silicon only. If too little is free, answer short: the kubelet
        // fills the rest itself and Allocate then refuses, naming the pod that holds it.
        size = std::min<int>(size, static_cast<int>(avail.size()));
        spdlog::info(
            "preferred allocation avoids silicon of the other resource resource={} "
            "available={} free={}",
            assignment::ResourceName(impl_.allocator.kind()), all.size(), avail.size());
        if (size == 0) {
          resp->add_container_responses();
          continue;
        }
      }
      absl::StatusOr<std::vector<std::string>> ids =
          impl_.allocator.Preferred(node, avail, must, size, hint);
      if (!ids.ok()) {
        spdlog::warn("preferred allocation rejected resource={} error=\"{}\"",
                     assignment::ResourceName(impl_.allocator.kind()),
                     std::string(ids.status().message()));
        return ToGrpc(ids.status());
      }
      auto* out = resp->add_container_responses();
      for (const std::string& id : *ids) out->add_deviceids(id);
    }
    return grpc::Status::OK;
  }

  grpc::Status Allocate(grpc::ServerContext*, const v1beta1::AllocateRequest* req,
                        v1beta1::AllocateResponse* resp) override {
    grpc::Status status = AllocateContainers(req, resp);
    if (impl_.metrics != nullptr) impl_.metrics->AllocateDone(impl_.allocator.kind(), status.ok());
    return status;
  }

  grpc::Status PreStartContainer(grpc::ServerContext*, const v1beta1::PreStartContainerRequest*,
                                 v1beta1::PreStartContainerResponse*) override {
    return grpc::Status::OK;
  }

 private:
  grpc::Status AllocateContainers(const v1beta1::AllocateRequest* req,
                                  v1beta1::AllocateResponse* resp) {
    if (req->container_requests_size() == 0) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no container_requests");
    }
    const NodeSnapshot node = impl_.source.Snapshot();
    for (const v1beta1::ContainerAllocateRequest& c : req->container_requests()) {
      const std::vector<std::string> ids = ToVector(c.devices_ids());
      absl::StatusOr<ContainerAllocation> alloc = impl_.allocator.Allocate(node, ids);
      if (!alloc.ok()) {
        spdlog::warn("allocate rejected resource={} ids={} error=\"{}\"",
                     assignment::ResourceName(impl_.allocator.kind()), absl::StrJoin(ids, ","),
                     std::string(alloc.status().message()));
        return ToGrpc(alloc.status());
      }
      absl::StatusOr<EnvList> us_env = impl_.UltraServerEnvFor(node, ids);
      if (!us_env.ok()) {
        spdlog::warn("allocate refused resource={} ids={} error=\"{}\"",
                     assignment::ResourceName(impl_.allocator.kind()), absl::StrJoin(ids, ","),
                     std::string(us_env.status().message()));
        return ToGrpc(us_env.status());
      }
      for (auto& [k, v] : *us_env) alloc->envs[k] = std::move(v);
      if (impl_.ledger != nullptr) {
        absl::StatusOr<std::vector<int>> parsed = impl_.allocator.ParseIds(node, ids);
        absl::Status claim = parsed.ok()
                                 ? impl_.ledger->Claim(impl_.allocator.kind(), node, *parsed)
                                 : parsed.status();
        if (!claim.ok()) {
          spdlog::warn("allocate refused resource={} ids={} error=\"{}\"",
                       assignment::ResourceName(impl_.allocator.kind()), absl::StrJoin(ids, ","),
                       std::string(claim.message()));
          return ToGrpc(claim);
        }
      }
      auto* out = resp->add_container_responses();
      for (const DeviceNode& d : alloc->devices) {
        v1beta1::DeviceSpec* spec = out->add_devices();
        spec->set_container_path(d.container_path);
        spec->set_host_path(d.host_path);
        spec->set_permissions(d.permissions);
      }
      for (const auto& [k, v] : alloc->envs) (*out->mutable_envs())[k] = v;
      spdlog::info("allocated resource={} ids={} visible_cores={}",
                   assignment::ResourceName(impl_.allocator.kind()), absl::StrJoin(ids, ","),
                   alloc->envs["NEURON_RT_VISIBLE_CORES"]);
    }
    if (impl_.on_allocated) impl_.on_allocated();
    return grpc::Status::OK;
  }

  PluginServer::Impl& impl_;
};

}  // namespace

PluginServer::PluginServer(const Allocator& allocator, const DeviceSource& source,
                           AllocationHints* hints, std::string socket_path,
                           std::function<void()> on_allocated, SiliconLedger* ledger)
    : allocator_(allocator),
      socket_path_(std::move(socket_path)),
      impl_(std::make_unique<Impl>(allocator, source, hints, std::move(on_allocated), ledger)) {}

PluginServer::~PluginServer() { Stop(); }

void PluginServer::set_metrics(PluginMetrics* metrics) { impl_->metrics = metrics; }

void PluginServer::set_ultraserver_identity(IdentityFn identity) {
  impl_->identity = std::move(identity);
}

std::string PluginServer::endpoint() const {
  return std::filesystem::path(socket_path_).filename().string();
}

absl::Status PluginServer::Start() {
  Stop();
  if (::unlink(socket_path_.c_str()) != 0 && errno != ENOENT) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot remove stale socket ", socket_path_, ": ", std::strerror(errno)));
  }
  auto service = std::make_unique<DevicePluginService>(*impl_);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket_path_, grpc::InsecureServerCredentials());
  builder.RegisterService(service.get());
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot serve on ", socket_path_));
  }
  absl::MutexLock lock(&impl_->mu);
  impl_->stopping = false;
  impl_->server = std::move(server);
  impl_->service = std::move(service);
  spdlog::info("serving resource={} socket={}", assignment::ResourceName(kind()), socket_path_);
  return absl::OkStatus();
}

void PluginServer::Stop() {
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<grpc::Service> service;
  {
    absl::MutexLock lock(&impl_->mu);
    if (impl_->server == nullptr) return;
    impl_->stopping = true;  // ListAndWatch handlers return on their next wake-up (now)
    server = std::move(impl_->server);
    service = std::move(impl_->service);
  }
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server->Wait();
  server.reset();
  service.reset();
  ::unlink(socket_path_.c_str());
  spdlog::info("stopped resource={} socket={}", assignment::ResourceName(kind()), socket_path_);
}

bool PluginServer::running() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->server != nullptr;
}

void PluginServer::NotifyChanged() {
  absl::MutexLock lock(&impl_->mu);
  ++impl_->generation;
}

absl::Status RegisterWithKubelet(const std::string& kubelet_socket, const std::string& endpoint,
                                 assignment::ResourceKind kind, absl::Duration timeout) {
  struct stat st {};
  if (::stat(kubelet_socket.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) {
    return absl::UnavailableError(absl::StrCat("kubelet socket ", kubelet_socket, " is absent"));
  }
  auto channel = grpc::CreateChannel("unix:" + kubelet_socket, grpc::InsecureChannelCredentials());
  auto stub = v1beta1::Registration::NewStub(channel);
  v1beta1::RegisterRequest req;
  req.set_version("v1beta1");
  req.set_endpoint(endpoint);
  req.set_resource_name(assignment::ResourceName(kind));
  req.mutable_options()->set_get_preferred_allocation_available(true);
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  v1beta1::Empty resp;
  grpc::Status s = stub->Register(&ctx, req, &resp);
  if (!s.ok()) {
    // Absent or restarting kubelet -> Unavailable (retry); a refusal keeps the kubelet's code.
    const auto code = s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED
                          ? absl::StatusCode::kUnavailable
                          : static_cast<absl::StatusCode>(s.error_code());
    return absl::Status(code, absl::StrCat("register ", assignment::ResourceName(kind), " with ",
                                           kubelet_socket, ": ", s.error_message()));
  }
  spdlog::info("registered resource={} endpoint={}", assignment::ResourceName(kind), endpoint);
  return absl::OkStatus();
}

}  // namespace neuron::deviceplugin
