// File: tests/fakes/kubelet/fake_kubelet.cc
#include "tests/fakes/kubelet/fake_kubelet.h"

#include <dirent.h>
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "proto/deviceplugin/v1beta1/api.grpc.pb.h"
#include "tests/fakes/kubelet/fake_kubelet_state.h"

namespace neuron::fakes {
namespace {

// The kubelet accepts only extended resource names: "<domain>/<name>" outside kubernetes.io.
bool IsExtendedResourceName(const std::string& name) {
  const size_t slash = name.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == name.size()) return false;
  if (name.find('/', slash + 1) != std::string::npos) return false;
  const std::string domain = name.substr(0, slash);
  if (domain == "kubernetes.io" || absl::EndsWith(domain, ".kubernetes.io")) return false;
  return domain.find('.') != std::string::npos;
}

}  // namespace

grpc::Status FakeKubelet::State::Register(const v1beta1::RegisterRequest& req) {
  if (req.version() != "v1beta1") {
    return grpc::Status(grpc::StatusCode::UNKNOWN,
                        absl::StrCat("requested API version \"", req.version(),
                                     "\" is not supported by kubelet. Supported version is "
                                     "v1beta1"));
  }
  if (!IsExtendedResourceName(req.resource_name())) {
    return grpc::Status(grpc::StatusCode::UNKNOWN,
                        absl::StrCat("invalid name of device plugin socket: resource name \"",
                                     req.resource_name(), "\" is not an extended resource name"));
  }
  // Synchronous dial-back and GetDevicePluginOptions, as the kubelet does inside Register.
  auto ep = std::make_unique<Endpoint>();
  const std::string path = (std::filesystem::path(dir) / req.endpoint()).string();
  ep->channel = grpc::CreateChannel("unix:" + path, grpc::InsecureChannelCredentials());
  if (!ep->channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
    return grpc::Status(grpc::StatusCode::UNKNOWN,
                        absl::StrCat("failed to dial device plugin at ", path));
  }
  ep->stub = v1beta1::DevicePlugin::NewStub(ep->channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1beta1::Empty empty;
  grpc::Status s = ep->stub->GetDevicePluginOptions(&ctx, empty, &ep->options);
  if (!s.ok()) {
    return grpc::Status(grpc::StatusCode::UNKNOWN,
                        absl::StrCat("failed to get device plugin options: ", s.error_message()));
  }
  ep->watch_ctx = std::make_unique<grpc::ClientContext>();
  Endpoint* raw = ep.get();
  const std::string resource = req.resource_name();
  std::unique_ptr<Endpoint> old;
  {
    absl::MutexLock lock(&mu);
    old = std::move(endpoints[resource]);  // a new registration replaces the old endpoint
  }
  Close(std::move(old));
  {
    absl::MutexLock lock(&mu);
    registrations.push_back(req);
    raw->watcher = std::thread([this, resource, raw] { Watch(resource, raw); });
    endpoints[resource] = std::move(ep);
  }
  return grpc::Status::OK;
}

namespace {

class RegistrationService final : public v1beta1::Registration::Service {
 public:
  explicit RegistrationService(FakeKubelet::State& s) : s_(s) {}
  grpc::Status Register(grpc::ServerContext*, const v1beta1::RegisterRequest* req,
                        v1beta1::Empty*) override {
    return s_.Register(*req);
  }

 private:
  FakeKubelet::State& s_;
};

}  // namespace

FakeKubelet::FakeKubelet() : state_(std::make_unique<State>()) {
  char tmpl[] = "/tmp/fk-XXXXXX";
  const char* d = ::mkdtemp(tmpl);
  dir_ = d != nullptr ? d : "/tmp";
  state_->dir = dir_;
}

FakeKubelet::~FakeKubelet() {
  Stop();
  if (state_->pr_server) {
    state_->pr_server->Shutdown(std::chrono::system_clock::now());
    state_->pr_server->Wait();
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

absl::Status FakeKubelet::Start() {
  if (state_->server) return absl::OkStatus();
  ::unlink(kubelet_socket().c_str());
  auto service = std::make_unique<RegistrationService>(*state_);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + kubelet_socket(), grpc::InsecureServerCredentials());
  builder.RegisterService(service.get());
  state_->server = builder.BuildAndStart();
  if (!state_->server) return absl::UnavailableError("fake kubelet: cannot serve kubelet.sock");
  state_->registration = std::move(service);
  return absl::OkStatus();
}

void FakeKubelet::Stop() {
  if (state_->server) {
    state_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    state_->server->Wait();
    state_->server.reset();
    state_->registration.reset();
  }
  std::map<std::string, std::unique_ptr<Endpoint>> eps;
  {
    absl::MutexLock lock(&state_->mu);
    eps.swap(state_->endpoints);
  }
  for (auto& [name, ep] : eps) State::Close(std::move(ep));
}

absl::Status FakeKubelet::Restart() {
  Stop();
  // CleanupPluginDirectory: remove every unix socket; keep directories, regular files and the
  // checkpoint file.
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    if (entry.path().filename() == "kubelet_internal_checkpoint") continue;
    struct stat st {};
    if (::lstat(entry.path().c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
      ::unlink(entry.path().c_str());
    }
  }
  return Start();
}

int FakeKubelet::registration_count() const {
  absl::MutexLock lock(&state_->mu);
  return static_cast<int>(state_->registrations.size());
}

std::vector<v1beta1::RegisterRequest> FakeKubelet::registrations() const {
  absl::MutexLock lock(&state_->mu);
  return state_->registrations;
}

bool FakeKubelet::WaitForRegistrations(int count, absl::Duration timeout) const {
  absl::MutexLock lock(&state_->mu);
  auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_->mu) {
    return static_cast<int>(state_->registrations.size()) >= count;
  };
  return state_->mu.AwaitWithTimeout(absl::Condition(&done), timeout);
}

std::optional<v1beta1::DevicePluginOptions> FakeKubelet::options(
    const std::string& resource) const {
  absl::MutexLock lock(&state_->mu);
  auto it = state_->endpoints.find(resource);
  if (it == state_->endpoints.end()) return std::nullopt;
  return it->second->options;
}

std::optional<v1beta1::ListAndWatchResponse> FakeKubelet::LatestDevices(
    const std::string& resource) const {
  absl::MutexLock lock(&state_->mu);
  auto it = state_->latest.find(resource);
  if (it == state_->latest.end()) return std::nullopt;
  return it->second;
}

int FakeKubelet::update_count(const std::string& resource) const {
  absl::MutexLock lock(&state_->mu);
  auto it = state_->updates.find(resource);
  return it == state_->updates.end() ? 0 : it->second;
}

bool FakeKubelet::WaitForDevices(
    const std::string& resource,
    const std::function<bool(const v1beta1::ListAndWatchResponse&)>& pred,
    absl::Duration timeout) const {
  absl::MutexLock lock(&state_->mu);
  auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_->mu) {
    auto it = state_->latest.find(resource);
    return it != state_->latest.end() && pred(it->second);
  };
  return state_->mu.AwaitWithTimeout(absl::Condition(&done), timeout);
}

bool FakeKubelet::StreamOpen(const std::string& resource) const {
  absl::MutexLock lock(&state_->mu);
  auto it = state_->open.find(resource);
  return it != state_->open.end() && it->second;
}

absl::StatusOr<v1beta1::PreferredAllocationResponse> FakeKubelet::GetPreferredAllocation(
    const std::string& resource, const v1beta1::PreferredAllocationRequest& req) {
  v1beta1::DevicePlugin::Stub* stub = state_->StubFor(resource);
  if (stub == nullptr) return absl::FailedPreconditionError("resource not registered");
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1beta1::PreferredAllocationResponse resp;
  if (absl::Status s = FromGrpc(stub->GetPreferredAllocation(&ctx, req, &resp)); !s.ok()) return s;
  return resp;
}

absl::StatusOr<v1beta1::AllocateResponse> FakeKubelet::Allocate(
    const std::string& resource, const v1beta1::AllocateRequest& req) {
  v1beta1::DevicePlugin::Stub* stub = state_->StubFor(resource);
  if (stub == nullptr) return absl::FailedPreconditionError("resource not registered");
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1beta1::AllocateResponse resp;
  if (absl::Status s = FromGrpc(stub->Allocate(&ctx, req, &resp)); !s.ok()) return s;
  if (resp.container_responses_size() == 0) {
    return absl::InternalError("empty container_responses");  // the kubelet rejects this too
  }
  return resp;
}

}  // namespace neuron::fakes
