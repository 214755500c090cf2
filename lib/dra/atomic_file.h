// Whole-file writes that readers (containerd's CDI cache, our own restart) see complete or not
// at all: a temporary file beside the target, fsync, rename over the target, fsync the
// directory so the rename itself survives a crash.
#ifndef NEURON_LIB_DRA_ATOMIC_FILE_H_
#define NEURON_LIB_DRA_ATOMIC_FILE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace neuron::dra {

// The temporary file is "<dir>/.<name>.tmp": hidden, and without the .json suffix a CDI cache
// scanning the directory would pick up. Errors name the path and errno's text.
absl::Status WriteFileAtomically(const std::string& path, std::string_view content);
// NotFound when the file does not exist.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);
// Removes the file and syncs its directory; a file that is already gone is not an error.
absl::Status RemoveFileDurably(const std::string& path);

}  // namespace neuron::dra

#endif  // NEURON_LIB_DRA_ATOMIC_FILE_H_
