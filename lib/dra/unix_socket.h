// File: lib/dra/unix_socket.h
// Socket-file housekeeping shared by the registration and DRA servers.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace neuron::dra {

// True when `path` exists and is a unix socket.
bool IsSocket(const std::string& path);

// Makes `path` ready to listen on: creates its directory, checks that it fits sun_path (108
// bytes), and removes a stale socket left by a previous run. Anything else at `path` (a file,
// a directory) is not ours to delete: FailedPrecondition.
absl::Status PrepareSocketPath(const std::string& path);

// Removes the socket at `path` if there is one (ignores anything else).
void RemoveSocket(const std::string& path);

}  // namespace neuron::dra
