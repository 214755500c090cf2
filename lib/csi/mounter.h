// File: lib/csi/mounter.h
// How a volume's writable view over a read-only directory is made. The overlay mounter is the
// real thing (the pod's writes land in `upper`, the node copy is `lower` and never changes);
// the copy mounter is the fallback for a driver without CAP_SYS_ADMIN (the pod gets its own
// copy of `lower` in `target`).
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace neuron::csi {

class Mounter {
 public:
  virtual ~Mounter() = default;
  // Makes `target` (an existing empty directory) show `lower`, writable, with writes kept in
  // `upper` (overlay's workdir is `work`; both exist, empty, on one filesystem).
  virtual absl::Status Mount(const std::string& lower, const std::string& upper,
                             const std::string& work, const std::string& target) = 0;
  // Undoes Mount; a target that is not mounted (or does not exist) is not an error.
  virtual absl::Status Unmount(const std::string& target) = 0;
  virtual bool IsMounted(const std::string& target) = 0;
  virtual const char* name() const { return "custom"; }  // "overlay" or "copy", for logs
};

// mount(2) type "overlay" with lowerdir/upperdir/workdir; unmount with umount2 (lazily when busy).
std::unique_ptr<Mounter> NewOverlayMounter();
// Copies `lower` into `target`; "mounted" is remembered by a hidden marker file beside the
// target (it survives a driver restart and the pod does not see it). Unmount empties `target`.
std::unique_ptr<Mounter> NewCopyMounter();
// Picks overlay when a probe mount under `state_dir` works (files visible, writes kept out of
// the lower directory), else copy; logs which and why.
std::unique_ptr<Mounter> DetectMounter(const std::string& state_dir);

// True when `path` is a mount point of this process's mount namespace (/proc/self/mountinfo).
absl::StatusOr<bool> IsMountPoint(const std::string& path);

}  // namespace neuron::csi
