// Whiteouts, opaque directories and type changes between layers (see layer_overlay.h).
#include "lib/cache/layer_overlay.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/cache/absl_view.h"

namespace neuron::cache {
namespace {

namespace fs = std::filesystem;

std::string Child(const std::string& dir, const std::string& name) {
  return dir == "." ? name : absl::StrCat(dir, "/", name);
}

// Never follows a symlink: remove_all removes the link, not what it points to.
absl::Status RemoveTree(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("remove ", path, ": ", ec.message()));
  return absl::OkStatus();
}

}  // namespace

void LayerPaths::Add(std::string_view path) {
  std::string p(path);
  while (p != "." && paths_.insert(p).second) {
    const size_t slash = p.rfind('/');
    if (slash == std::string::npos) break;
    p.resize(slash);
  }
}

absl::Status CheckNoSymlinkParents(std::string_view path) {
  for (size_t slash = path.find('/'); slash != std::string_view::npos;
       slash = path.find('/', slash + 1)) {
    const std::string prefix(path.substr(0, slash));
    struct stat st {};
    if (::lstat(prefix.c_str(), &st) != 0) {
      if (errno == ENOENT) return absl::OkStatus();
      return absl::UnavailableError(absl::StrCat("lstat ", prefix, ": ", std::strerror(errno)));
    }
    if (S_ISLNK(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "entry \"", Sv(path), "\": would be written through the symlink \"", prefix, "\""));
    }
    if (!S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(
          absl::StrCat("entry \"", Sv(path), "\": \"", prefix, "\" is not a directory"));
    }
  }
  return absl::OkStatus();
}

absl::Status ClearConflicting(const std::string& path, bool entry_is_dir) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return absl::OkStatus();
  const bool is_dir = S_ISDIR(st.st_mode);
  if (is_dir && !entry_is_dir) return RemoveTree(path);
  if (!is_dir && entry_is_dir && ::unlink(path.c_str()) != 0) {
    return absl::UnavailableError(absl::StrCat("unlink ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status ApplyWhiteout(const std::string& path, const LayerPaths& created) {
  NEURON_RETURN_IF_ERROR(CheckNoSymlinkParents(path));
  if (created.Contains(path)) return absl::OkStatus();
  return RemoveTree(path);
}

absl::Status ApplyOpaque(const std::string& dir, const LayerPaths& created) {
  if (dir != ".") {
    NEURON_RETURN_IF_ERROR(CheckNoSymlinkParents(Child(dir, "x")));
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return absl::OkStatus();
  }
  // Depth-first without recursion: names are bounded by PATH_MAX, the stack by nothing else.
  std::vector<std::string> pending{dir};
  while (!pending.empty()) {
    const std::string current = std::move(pending.back());
    pending.pop_back();
    std::error_code ec;
    std::vector<std::pair<std::string, bool>> children;  // path, is a real directory
    for (fs::directory_iterator it(current, ec), end; !ec && it != end; it.increment(ec)) {
      const bool is_dir = it->symlink_status(ec).type() == fs::file_type::directory;
      children.emplace_back(Child(current, it->path().filename().string()), is_dir);
    }
    if (ec) return absl::UnavailableError(absl::StrCat("list ", current, ": ", ec.message()));
    for (const auto& [child, is_dir] : children) {
      if (!created.Contains(child)) {
        NEURON_RETURN_IF_ERROR(RemoveTree(child));
      } else if (is_dir) {
        pending.push_back(child);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace neuron::cache
