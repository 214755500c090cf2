// File operations of the cache store that must survive a crash: whole-file writes that readers
// (the CSI and DRA drivers) see complete or not at all, and durable removal.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace neuron::cache {

// Writes a hidden temporary file beside `path` (unique, so two writers never share one), fsyncs
// it, renames it over `path` and fsyncs the directory. Errors name the path and errno's text.
absl::Status WriteFileAtomically(const std::string& path, std::string_view content);
// NotFound when the file does not exist.
absl::StatusOr<std::string> ReadSmallFile(const std::string& path, size_t max_bytes = 1 << 20);
// Removes the file and syncs its directory; a file that is already gone is not an error.
absl::Status RemoveFileDurably(const std::string& path);
// fsync of a directory, so renames and removals in it survive a crash.
absl::Status SyncDirectory(const std::string& dir);
// Status for a failed system call: NotFound for ENOENT, ResourceExhausted for a full disk,
// Unavailable otherwise.
absl::Status ErrnoStatus(std::string_view what, const std::string& path, int err);

}  // namespace neuron::cache
