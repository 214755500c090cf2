// File: lib/csi/mount_info.cc
// Mount-point lookup in /proc/self/mountinfo. A stat() comparison with the parent would miss a
// bind mount of a directory on the same filesystem, so the mount table is the source of truth.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/csi/mounter.h"

namespace neuron::csi {
namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo (octal).
std::string UnescapeMountPath(const std::string& in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '\\' && i + 3 < in.size() && in[i + 1] >= '0' && in[i + 1] <= '3') {
      out.push_back(static_cast<char>(((in[i + 1] - '0') << 6) | ((in[i + 2] - '0') << 3) |
                                      (in[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(in[i]);
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<bool> IsMountPoint(const std::string& path) {
  std::error_code ec;
  // Compare canonical paths: the table holds them without symlinks or trailing slashes.
  std::filesystem::path canon = std::filesystem::weakly_canonical(path, ec);
  if (ec) return absl::InternalError(absl::StrCat("resolving ", path, ": ", ec.message()));
  std::ifstream in("/proc/self/mountinfo");
  if (!in) return absl::InternalError("cannot read /proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    // id parent major:minor root mount_point ...
    std::istringstream fields(line);
    std::string id, parent, dev, root, mount_point;
    if (!(fields >> id >> parent >> dev >> root >> mount_point)) continue;
    if (UnescapeMountPath(mount_point) == canon.string()) return true;
  }
  return false;
}

}  // namespace neuron::csi
