// File: lib/deviceplugin/plugin_manager.cc
#include "lib/deviceplugin/plugin_manager.h"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"

namespace neuron::deviceplugin {
namespace {

bool IsSocket(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

}  // namespace

PluginManager::PluginManager(std::vector<PluginServer*> servers, ManagerOptions opts)
    : servers_(std::move(servers)), opts_(std::move(opts)) {}

void PluginManager::Reserve(Endpoint& e, const char* why) {
  spdlog::info("re-serving resource={} reason={}", assignment::ResourceName(e.server->kind()), why);
  if (absl::Status s = e.server->Start(); !s.ok()) {
    spdlog::error("serve failed resource={} error=\"{}\"",
                  assignment::ResourceName(e.server->kind()), std::string(s.message()));
  }
  e.registered = false;
  e.backoff.Reset();
  e.next_attempt = absl::InfinitePast();
}

void PluginManager::HandleEvents(int fd, std::vector<Endpoint>& eps) {
  alignas(struct inotify_event) char buf[8192];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n <= 0) return;  // EAGAIN: drained
    for (ssize_t off = 0; off < n;) {
      const auto* ev = reinterpret_cast<const struct inotify_event*>(buf + off);
      off += static_cast<ssize_t>(sizeof(struct inotify_event) + ev->len);
      if (ev->mask & IN_Q_OVERFLOW) {
        CheckSockets(eps);
        for (Endpoint& e : eps) e.registered = false, e.next_attempt = absl::InfinitePast();
        continue;
      }
      if (ev->len == 0) continue;
      const std::string name(ev->name);
      if (name == opts_.kubelet_socket_name && (ev->mask & (IN_CREATE | IN_MOVED_TO))) {
        spdlog::info("kubelet socket created: re-registering");
        CheckSockets(eps);  // a restarting kubelet deletes our sockets first
        for (Endpoint& e : eps) {
          e.registered = false;
          e.backoff.Reset();
          e.next_attempt = absl::InfinitePast();
        }
        continue;
      }
      if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) {
        for (Endpoint& e : eps) {
          // Our own Start() unlinks and re-creates the socket: only a socket that is still
          // missing now was deleted by someone else (the kubelet).
          if (name == e.server->endpoint() && !IsSocket(e.server->socket_path())) {
            Reserve(e, "socket deleted");
          }
        }
      }
    }
  }
}

void PluginManager::CheckSockets(std::vector<Endpoint>& eps) {
  for (Endpoint& e : eps) {
    if (!IsSocket(e.server->socket_path())) Reserve(e, "socket missing");
  }
}

// Long on purpose: the registration state machine's loop (start, register, watch the
// kubelet socket, re-register) with its states spelled out where they change.
absl::Status PluginManager::Run(absl::Notification& stop) {
  std::error_code ec;
  std::filesystem::create_directories(opts_.plugin_dir, ec);
  const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return absl::InternalError(absl::StrCat("inotify_init1: ", std::strerror(errno)));
  if (::inotify_add_watch(fd, opts_.plugin_dir.c_str(),
                          IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM) < 0) {
    const int err = errno;
    ::close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat("cannot watch ", opts_.plugin_dir, ": ", std::strerror(err)));
  }
  std::vector<Endpoint> eps;
  uint64_t seed = 1;
  for (PluginServer* s : servers_) {
    eps.push_back(Endpoint{s, false, absl::InfinitePast(), Backoff(opts_.backoff, seed++)});
  }
  for (Endpoint& e : eps) {
    if (absl::Status s = e.server->Start(); !s.ok()) {
      ::close(fd);
      for (Endpoint& x : eps) x.server->Stop();
      return s;
    }
  }
  const std::string kubelet_socket =
      (std::filesystem::path(opts_.plugin_dir) / opts_.kubelet_socket_name).string();
  absl::Time next_check = absl::Now() + opts_.check_interval;
  while (!stop.HasBeenNotified()) {
    const absl::Time now = absl::Now();
    absl::Time wake = now + absl::Milliseconds(100);  // bound: notice `stop` promptly
    for (Endpoint& e : eps) {
      if (e.registered) continue;
      if (e.next_attempt <= now) {
        absl::Status s = RegisterWithKubelet(kubelet_socket, e.server->endpoint(), e.server->kind(),
                                             opts_.register_timeout);
        if (opts_.metrics != nullptr) opts_.metrics->RegisterDone(e.server->kind(), s.ok());
        if (s.ok()) {
          e.registered = true;
          e.backoff.Reset();
          registrations_.fetch_add(1);
          continue;
        }
        const absl::Duration delay = e.backoff.Next();
        e.next_attempt = absl::Now() + delay;
        spdlog::warn("registration failed resource={} retry_in={} error=\"{}\"",
                     assignment::ResourceName(e.server->kind()), absl::FormatDuration(delay),
                     std::string(s.message()));
      }
      wake = std::min(wake, e.next_attempt);
    }
    if (absl::Now() >= next_check) {
      CheckSockets(eps);
      next_check = absl::Now() + opts_.check_interval;
    }
    all_registered_ =
        std::all_of(eps.begin(), eps.end(), [](const Endpoint& e) { return e.registered; });
    struct pollfd pfd = {fd, POLLIN, 0};
    const int timeout_ms = static_cast<int>(
        std::clamp<int64_t>(absl::ToInt64Milliseconds(wake - absl::Now()), 0, 100));
    if (::poll(&pfd, 1, timeout_ms) > 0 && (pfd.revents & POLLIN)) HandleEvents(fd, eps);
  }
  all_registered_ = false;
  ::close(fd);
  for (Endpoint& e : eps) e.server->Stop();
  return absl::OkStatus();
}

}  // namespace neuron::deviceplugin
