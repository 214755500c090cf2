// File: lib/sysfs/fs.h
// The filesystem seam: every host read (sysfs, /dev) goes through an Fs rooted at --host-root.
// Paths are relative to the root ("sys/class/neuron_device/neuron0/core_count"); a leading '/'
// is accepted and ignored. The rooted implementation refuses paths that would leave the root
// through "..". Errors are absl::Status, never exceptions:
//   NotFound          the path (or a component of it) does not exist
//   InvalidArgument   the path escapes the root or names the wrong kind of file
//   PermissionDenied  EACCES/EPERM
//   Unavailable       any other I/O error (EIO, a device vanishing mid-read, ...): retry later
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace neuron::sysfs {

class Fs {
 public:
  virtual ~Fs() = default;
  // Whole file contents (sysfs attributes are small; reads are capped at 1 MiB).
  virtual absl::StatusOr<std::string> ReadFile(const std::string& path) const = 0;
  // Entry names of a directory (no "." / ".."), sorted.
  virtual absl::StatusOr<std::vector<std::string>> ListDir(const std::string& path) const = 0;
  // Target of a symlink, as stored (not resolved).
  virtual absl::StatusOr<std::string> ReadLink(const std::string& path) const = 0;
  virtual bool Exists(const std::string& path) const = 0;
  // Absolute host path of the root, without a trailing '/' (except for "/" itself).
  virtual std::string root() const = 0;
};

// An Fs over the real filesystem below `root` (production: "/" or the host mount of a container).
std::unique_ptr<Fs> MakeRootedFs(std::string root);

// Normalises a path relative to the root: collapses "//" and ".", resolves ".." lexically.
// InvalidArgument when ".." would climb above the root. Exposed for tests.
absl::StatusOr<std::string> NormalizeRelative(const std::string& path);

}  // namespace neuron::sysfs
