// File: tests/fakes/kubelet/dra_fake_kubelet.cc
// The plugin-watcher half: discovery, GetInfo, validation, NotifyRegistrationStatus.
#include "tests/fakes/kubelet/dra_fake_kubelet.h"

#include <dirent.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "proto/pluginregistration/v1/api.grpc.pb.h"
#include "tests/fakes/kubelet/dra_fake_kubelet_state.h"

namespace neuron::fakes {
namespace {

constexpr char kV1[] = "v1.DRAPlugin";
constexpr char kV1beta1[] = "v1beta1.DRAPlugin";

bool IsSocket(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

std::chrono::system_clock::time_point In(absl::Duration d) {
  return absl::ToChronoTime(absl::Now() + d);
}

// The kubelet's servicesSupportedByKubelet and its choice among the plugin's list.
std::string ChooseService(DraKubeletVersion v, const std::vector<std::string>& offered) {
  if (v == DraKubeletVersion::k1_34) {  // first of the plugin's entries the kubelet knows
    for (const std::string& s : offered) {
      if (s == kV1 || s == kV1beta1) return s;
    }
    return "";
  }
  // 1.32/1.33: the kubelet's own preference order (v1alpha4 not modelled).
  return std::find(offered.begin(), offered.end(), kV1beta1) != offered.end() ? kV1beta1 : "";
}

std::string Quoted(const std::vector<std::string>& v) {
  return absl::StrCat("[\"", absl::StrJoin(v, "\" \""), "\"]");
}

}  // namespace

std::shared_ptr<DraPlugin> FakeDraKubelet::State::Find(const std::string& driver) const {
  absl::MutexLock lock(&mu);
  auto it = plugins.find(driver);
  return it == plugins.end() ? nullptr : it->second;
}

std::string FakeDraKubelet::State::Register(const std::string& socket_path) {
  auto channel = grpc::CreateChannel("unix:" + socket_path, grpc::InsecureChannelCredentials());
  if (!channel->WaitForConnected(In(absl::Seconds(2)))) {
    return absl::StrCat("RegisterPlugin error -- dial failed at socket ", socket_path);
  }
  auto client = pluginregistration::Registration::NewStub(channel);
  pluginregistration::PluginInfo info;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(In(absl::Seconds(1)));
    grpc::Status s = client->GetInfo(&ctx, pluginregistration::InfoRequest(), &info);
    if (!s.ok()) {
      return absl::StrCat(
          "RegisterPlugin error -- failed to get plugin info using RPC GetInfo at "
          "socket ",
          socket_path, ", err: ", s.error_message());
    }
  }
  auto notify = [&](bool ok, const std::string& error) {
    pluginregistration::RegistrationStatus status;
    status.set_plugin_registered(ok);
    status.set_error(error);
    pluginregistration::RegistrationStatusResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(In(absl::Seconds(5)));
    return client->NotifyRegistrationStatus(&ctx, status, &resp);
  };
  auto refuse = [&](const std::string& error) {
    notify(false, error);
    return error;
  };
  if (info.type() != "DRAPlugin") {
    return refuse(absl::StrCat("RegisterPlugin error -- no handler registered for plugin type: ",
                               info.type(), " at socket ", socket_path));
  }
  DraRegistration reg;
  reg.socket_path = socket_path;
  reg.type = info.type();
  reg.name = info.name();
  reg.endpoint = info.endpoint().empty() ? socket_path : info.endpoint();
  reg.supported_versions.assign(info.supported_versions().begin(), info.supported_versions().end());
  const std::vector<std::string> known = version == DraKubeletVersion::k1_34
                                             ? std::vector<std::string>{kV1, kV1beta1}
                                             : std::vector<std::string>{kV1beta1};
  reg.chosen_service = ChooseService(version, reg.supported_versions);
  if (reg.supported_versions.empty() || reg.chosen_service.empty()) {
    const std::string why =
        reg.supported_versions.empty()
            ? std::string("empty list of supported gRPC services (aka supported versions)")
            : absl::StrCat("none of services supported by the plugin (",
                           Quoted(reg.supported_versions), ") are supported by the kubelet (",
                           Quoted(known), ")");
    return refuse(absl::StrCat(
        "RegisterPlugin error -- plugin validation failed with err: invalid supported gRPC "
        "versions of DRA driver plugin ",
        reg.name, " at endpoint ", reg.endpoint, ": ", why));
  }
  if (reg.name.empty()) {
    return refuse(
        "RegisterPlugin error -- plugin registration failed with err: DRA driver name "
        "is empty");
  }
  bool duplicate = false;
  {
    absl::MutexLock lock(&mu);
    auto it = plugins.find(reg.name);
    duplicate = it != plugins.end() && it->second->reg.endpoint == reg.endpoint;
  }
  if (duplicate) {
    return refuse(
        absl::StrCat("RegisterPlugin error -- plugin registration failed with err: endpoint ",
                     reg.endpoint, " already registered for DRA driver plugin ", reg.name));
  }
  auto plugin = std::make_shared<DraPlugin>();
  plugin->reg = reg;
  // Lazy, as grpc.NewClient: the endpoint is dialled on the first call.
  plugin->channel = grpc::CreateChannel("unix:" + reg.endpoint, grpc::InsecureChannelCredentials());
  {
    absl::MutexLock lock(&mu);
    plugins[reg.name] = plugin;
  }
  if (grpc::Status s = notify(true, ""); !s.ok()) {
    return absl::StrCat("RegisterPlugin error -- failed to send registration status at socket ",
                        socket_path, ", err: ", s.error_message());
  }
  absl::MutexLock lock(&mu);
  ++registrations;
  return "";
}

void FakeDraKubelet::State::Deregister(const std::string& socket_path) {
  pending.erase(socket_path);
  absl::MutexLock lock(&mu);
  for (auto it = plugins.begin(); it != plugins.end(); ++it) {
    if (it->second->reg.socket_path == socket_path) {
      plugins.erase(it);
      return;
    }
  }
}

void FakeDraKubelet::State::Attempt(const std::string& socket_path) {
  const std::string error = Register(socket_path);
  if (error.empty()) {
    pending.erase(socket_path);
    return;
  }
  pending[socket_path] = absl::Now() + absl::Seconds(1);
  absl::MutexLock lock(&mu);
  errors.push_back(error);
}

void FakeDraKubelet::State::Watch(int fd) {
  alignas(struct inotify_event) char buf[8192];
  while (!stopping.load()) {
    struct pollfd pfd = {fd, POLLIN, 0};
    if (::poll(&pfd, 1, 50) > 0 && (pfd.revents & POLLIN)) {
      ssize_t n;
      while ((n = ::read(fd, buf, sizeof(buf))) > 0) {
        for (ssize_t off = 0; off < n;) {
          const auto* ev = reinterpret_cast<const struct inotify_event*>(buf + off);
          off += static_cast<ssize_t>(sizeof(struct inotify_event) + ev->len);
          if (ev->len == 0 || ev->name[0] == '.') continue;  // the kubelet ignores dot files
          const std::string path = registrar_dir + "/" + ev->name;
          if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) Deregister(path);
          if ((ev->mask & (IN_CREATE | IN_MOVED_TO)) && IsSocket(path)) {
            Deregister(path);  // a new socket at a known path: the old plugin is gone
            pending[path] = absl::InfinitePast();
          }
        }
      }
    }
    const absl::Time now = absl::Now();
    std::vector<std::string> due;
    for (const auto& [path, when] : pending) {
      if (when <= now) due.push_back(path);
    }
    for (const std::string& path : due) {
      if (IsSocket(path)) {
        Attempt(path);
      } else {
        pending.erase(path);
      }
    }
  }
}

FakeDraKubelet::FakeDraKubelet(DraKubeletVersion version) : state_(std::make_unique<State>()) {
  char tmpl[] = "/tmp/drakubelet.XXXXXX";
  const char* made = ::mkdtemp(tmpl);
  dir_ = made != nullptr ? made : "/tmp/drakubelet.failed";
  std::filesystem::create_directories(registrar_dir());
  std::filesystem::create_directories(plugins_dir());
  state_->version = version;
  state_->registrar_dir = registrar_dir();
}

FakeDraKubelet::~FakeDraKubelet() {
  Stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

absl::Status FakeDraKubelet::Start() {
  Stop();
  const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return absl::InternalError("inotify_init1 failed");
  if (::inotify_add_watch(fd, registrar_dir().c_str(),
                          IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM) < 0) {
    ::close(fd);
    return absl::InternalError(absl::StrCat("cannot watch ", registrar_dir()));
  }
  // Sockets already present (a restarted kubelet traverses the directory).
  state_->pending.clear();
  for (const auto& entry : std::filesystem::directory_iterator(registrar_dir())) {
    const std::string name = entry.path().filename().string();
    if (!name.empty() && name[0] != '.' && IsSocket(entry.path().string())) {
      state_->pending[entry.path().string()] = absl::InfinitePast();
    }
  }
  state_->stopping = false;
  State* st = state_.get();
  state_->watcher = std::thread([st, fd] {
    st->Watch(fd);
    ::close(fd);
  });
  return absl::OkStatus();
}

void FakeDraKubelet::Stop() {
  state_->stopping = true;
  if (state_->watcher.joinable()) state_->watcher.join();
  absl::MutexLock lock(&state_->mu);
  state_->plugins.clear();
}

absl::Status FakeDraKubelet::Restart() {
  Stop();
  return Start();
}

int FakeDraKubelet::DeleteRegistrationSockets() {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(registrar_dir())) {
    if (IsSocket(entry.path().string()) && ::unlink(entry.path().c_str()) == 0) ++n;
  }
  return n;
}

int FakeDraKubelet::registration_count() const {
  absl::MutexLock lock(&state_->mu);
  return state_->registrations;
}

bool FakeDraKubelet::WaitForRegistrations(int count, absl::Duration timeout) const {
  auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_->mu) {
    return state_->registrations >= count;
  };
  absl::MutexLock lock(&state_->mu);
  return state_->mu.AwaitWithTimeout(absl::Condition(&done), timeout);
}

std::optional<DraRegistration> FakeDraKubelet::registration(const std::string& driver) const {
  std::shared_ptr<DraPlugin> p = state_->Find(driver);
  if (p == nullptr) return std::nullopt;
  return p->reg;
}

bool FakeDraKubelet::WaitForDeregistration(const std::string& driver,
                                           absl::Duration timeout) const {
  auto gone = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_->mu) {
    return state_->plugins.count(driver) == 0;
  };
  absl::MutexLock lock(&state_->mu);
  return state_->mu.AwaitWithTimeout(absl::Condition(&gone), timeout);
}

std::vector<std::string> FakeDraKubelet::registration_errors() const {
  absl::MutexLock lock(&state_->mu);
  return state_->errors;
}

bool FakeDraKubelet::WaitForRegistrationErrors(int count, absl::Duration timeout) const {
  auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state_->mu) {
    return static_cast<int>(state_->errors.size()) >= count;
  };
  absl::MutexLock lock(&state_->mu);
  return state_->mu.AwaitWithTimeout(absl::Condition(&done), timeout);
}

}  // namespace neuron::fakes
