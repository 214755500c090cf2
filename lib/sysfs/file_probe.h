// File: lib/sysfs/file_probe.h
// Cheap repeated reads of a fixed set of sysfs files, for checks that run many times a second
// (device health). Paths are checked and made absolute once, when added; each read is then one
// open/read/close (or stat, readlink) into a stack buffer: no allocation, no libpci.
// Real sysfs attributes raise no inotify events when the driver's value changes, so polling
// such a prepared list is the honest way to notice a change quickly.
//
//   sysfs::FileProbe probe(fs);
//   absl::StatusOr<int> h = probe.Add("sys/class/neuron_device/neuron0/stats/hardware/x");
//   std::optional<uint64_t> v = probe.ReadU64(*h);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/sysfs/fs.h"

namespace neuron::sysfs {

class FileProbe {
 public:
  explicit FileProbe(const Fs& fs) : root_(fs.root()) {}

  // Prepares `path` (relative to the Fs root) and returns its handle. InvalidArgument when the
  // path would leave the root.
  absl::StatusOr<int> Add(const std::string& path);
  void Clear() { paths_.clear(); }

  // nullopt when the file is missing, unreadable or not a decimal counter (sysfs::ParseU64).
  std::optional<uint64_t> ReadU64(int handle) const;
  bool Exists(int handle) const;
  // Last component of the symlink's target ("neuron-driver" for ../drivers/neuron-driver);
  // "" when it is not a readable symlink. Valid until the next call (one probe, one thread).
  absl::string_view LinkBasename(int handle) const;

 private:
  std::string root_;
  std::vector<std::string> paths_;  // absolute
  mutable char link_buf_[256];
};

}  // namespace neuron::sysfs
