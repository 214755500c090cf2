// File: lib/dra/socket_keeper.h
// Keeps our sockets in place while the plugin runs. The kubelet treats a deleted registration
// socket as deregistration, and whoever cleans the kubelet's directories (a kubelet restart
// on some distributions, an operator, a re-created host directory) may delete ours: an inotify
// watch on the sockets' directories notices at once, and a periodic check catches what inotify
// cannot see (a directory deleted and created again).
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace neuron::dra {

struct KeptSocket {
  std::string path;
  std::function<absl::Status()> serve;  // (re)starts the server listening on `path`
};

class SocketKeeper {
 public:
  // Order matters: when a socket is missing, it and every socket after it are served again, in
  // order. List the DRA socket before the registration socket, so that the kubelet registers
  // afresh (and dials a live endpoint) whenever either was lost.
  SocketKeeper(std::vector<KeptSocket> sockets, absl::Duration check_interval);

  // Watches until `stop` fires. The sockets must already be served. Fails only when inotify
  // itself is unavailable.
  absl::Status Run(absl::Notification& stop);

  // Sockets served again so far (for tests and logs).
  int restores() const { return restores_.load(); }

 private:
  void AddWatches(int fd) const;
  void RestoreMissing();

  std::vector<KeptSocket> sockets_;
  absl::Duration check_interval_;
  std::atomic<int> restores_{0};
};

}  // namespace neuron::dra
