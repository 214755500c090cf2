// File: lib/dra/socket_keeper.cc
#include "lib/dra/socket_keeper.h"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "lib/dra/unix_socket.h"

namespace neuron::dra {

SocketKeeper::SocketKeeper(std::vector<KeptSocket> sockets, absl::Duration check_interval)
    : sockets_(std::move(sockets)), check_interval_(check_interval) {}

// (Re-)adding a watch on a directory already watched is harmless; a directory that is gone
// (deleted with our socket in it) is watched again once RestoreMissing re-created it.
void SocketKeeper::AddWatches(int fd) const {
  for (const KeptSocket& k : sockets_) {
    const std::string dir = std::filesystem::path(k.path).parent_path().string();
    ::inotify_add_watch(fd, dir.c_str(), IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF);
  }
}

void SocketKeeper::RestoreMissing() {
  auto first_missing = std::find_if(sockets_.begin(), sockets_.end(),
                                    [](const KeptSocket& k) { return !IsSocket(k.path); });
  for (auto it = first_missing; it != sockets_.end(); ++it) {
    spdlog::warn("serving again socket={} reason=\"{}\"", it->path,
                 it == first_missing ? "missing" : "follows a missing socket");
    if (absl::Status s = it->serve(); !s.ok()) {
      // Left missing: the next check (or event) tries again.
      spdlog::error("serving again failed socket={} error=\"{}\"", it->path,
                    std::string(s.message()));
      return;
    }
    restores_.fetch_add(1);
  }
}

absl::Status SocketKeeper::Run(absl::Notification& stop) {
  const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return absl::InternalError(absl::StrCat("inotify_init1: ", std::strerror(errno)));
  AddWatches(fd);
  absl::Time next_check = absl::Now() + check_interval_;
  alignas(struct inotify_event) char buf[8192];
  while (!stop.HasBeenNotified()) {
    // Wake at least every 100 ms to notice `stop`.
    struct pollfd pfd = {fd, POLLIN, 0};
    const bool event = ::poll(&pfd, 1, 100) > 0 && (pfd.revents & POLLIN);
    if (event) {
      while (::read(fd, buf, sizeof(buf)) > 0) {
      }  // drained: which file changed does not matter, the check below looks at all
    }
    if (event || absl::Now() >= next_check) {
      RestoreMissing();
      AddWatches(fd);
      next_check = absl::Now() + check_interval_;
    }
  }
  ::close(fd);
  return absl::OkStatus();
}

}  // namespace neuron::dra
