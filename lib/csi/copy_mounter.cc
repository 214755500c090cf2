// File: lib/csi/copy_mounter.cc
// The fallback view without mount privileges: the pod's target gets its own copy of the node's
// cache directory. Costs disk and time per pod, but keeps the same guarantees: the node copy is
// never written and the pod's writes go away at unpublish.
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "lib/csi/mounter.h"

namespace neuron::csi {
namespace {

namespace fs = std::filesystem;

// "<parent>/.<name>.neuron-copy": beside the target, so the pod never sees it.
fs::path MarkerFor(const std::string& target) {
  fs::path t = fs::path(target).lexically_normal();
  if (!t.has_filename()) t = t.parent_path();
  return t.parent_path() / absl::StrCat(".", t.filename().string(), ".neuron-copy");
}

// Removes everything inside `dir`, keeping `dir` itself.
absl::Status EmptyDirectory(const fs::path& dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    fs::remove_all(it->path(), ec);
    if (ec) {
      return absl::InternalError(
          absl::StrCat("removing ", it->path().string(), ": ", ec.message()));
    }
  }
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return absl::InternalError(absl::StrCat("listing ", dir.string(), ": ", ec.message()));
  }
  return absl::OkStatus();
}

class CopyMounter final : public Mounter {
 public:
  absl::Status Mount(const std::string& lower, const std::string&, const std::string&,
                     const std::string& target) override {
    std::error_code ec;
    fs::copy(lower, target, fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
    if (ec) {
      EmptyDirectory(target).IgnoreError();  // no half copy left for the pod
      return absl::InternalError(
          absl::StrCat("copying ", lower, " into ", target, ": ", ec.message()));
    }
    std::ofstream marker(MarkerFor(target));
    marker << lower << "\n";
    if (!marker.flush()) {
      EmptyDirectory(target).IgnoreError();
      return absl::InternalError(absl::StrCat("writing copy marker ", MarkerFor(target).string()));
    }
    return absl::OkStatus();
  }

  absl::Status Unmount(const std::string& target) override {
    const fs::path marker = MarkerFor(target);
    std::error_code ec;
    if (!fs::exists(marker, ec)) return absl::OkStatus();  // not ours: never delete its contents
    if (absl::StatusOr<bool> mp = IsMountPoint(target); !mp.ok() || *mp) {
      return absl::FailedPreconditionError(absl::StrCat(
          target, " is a mount point (or its mount state is unknown); not emptying it"));
    }
    if (absl::Status s = EmptyDirectory(target); !s.ok()) return s;
    fs::remove(marker, ec);
    if (ec) {
      return absl::InternalError(absl::StrCat("removing ", marker.string(), ": ", ec.message()));
    }
    return absl::OkStatus();
  }

  bool IsMounted(const std::string& target) override {
    std::error_code ec;
    return fs::exists(MarkerFor(target), ec) && fs::is_directory(target, ec);
  }

  const char* name() const override { return "copy"; }
};

}  // namespace

std::unique_ptr<Mounter> NewCopyMounter() { return std::make_unique<CopyMounter>(); }

}  // namespace neuron::csi
