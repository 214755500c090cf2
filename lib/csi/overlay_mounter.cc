// File: lib/csi/overlay_mounter.cc
// The overlay view: lowerdir = the node's cache copy (never written), upperdir = this volume's
// private writes, mounted at the pod's target path. Needs CAP_SYS_ADMIN in the host's mount
// namespace (and Bidirectional propagation of the kubelet root when run in a container).
#include <spdlog/spdlog.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "lib/csi/mounter.h"

namespace neuron::csi {
namespace {

// overlay's option parser splits on ',' and ':' (and treats '\' as an escape).
absl::Status CheckOverlayPath(const char* what, const std::string& path) {
  if (path.empty() || path.find_first_of(",:\\") != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("overlay ", what, " \"", path, "\" is empty or contains ',', ':' or '\\'"));
  }
  return absl::OkStatus();
}

class OverlayMounter final : public Mounter {
 public:
  absl::Status Mount(const std::string& lower, const std::string& upper, const std::string& work,
                     const std::string& target) override {
    for (auto [what, path] : {std::pair{"lowerdir", &lower}, std::pair{"upperdir", &upper},
                              std::pair{"workdir", &work}}) {
      if (absl::Status s = CheckOverlayPath(what, *path); !s.ok()) return s;
    }
    const std::string opts =
        absl::StrCat("lowerdir=", lower, ",upperdir=", upper, ",workdir=", work);
    if (::mount("overlay", target.c_str(), "overlay", MS_NODEV, opts.c_str()) != 0) {
      const int err = errno;
      return absl::InternalError(
          absl::StrCat("mount overlay at ", target, " (", opts, ") failed: ", std::strerror(err)));
    }
    return absl::OkStatus();
  }

  absl::Status Unmount(const std::string& target) override {
    if (::umount2(target.c_str(), UMOUNT_NOFOLLOW) == 0) return absl::OkStatus();
    int err = errno;
    if (err == EINVAL || err == ENOENT) return absl::OkStatus();  // not mounted / gone
    if (err == EBUSY) {
      // Something still holds it (a lingering process of the pod): detach now, the kernel
      // frees it when the last user goes; the target is no longer a mount point either way.
      spdlog::warn("csi overlay busy, detaching target={}", target);
      if (::umount2(target.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) == 0) return absl::OkStatus();
      err = errno;
    }
    return absl::InternalError(absl::StrCat("unmount ", target, ": ", std::strerror(err)));
  }

  bool IsMounted(const std::string& target) override {
    absl::StatusOr<bool> m = IsMountPoint(target);
    return m.ok() && *m;
  }

  const char* name() const override { return "overlay"; }
};

}  // namespace

std::unique_ptr<Mounter> NewOverlayMounter() { return std::make_unique<OverlayMounter>(); }

}  // namespace neuron::csi
