// File: lib/sysfs/rooted_fs.cc
// The real-filesystem Fs. Paths are checked lexically: ".." may not climb above the root.
// Symlinks inside the tree are followed by the kernel as usual; sysfs only makes relative ones,
// which stay inside a host mount.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "lib/sysfs/fs.h"

namespace neuron::sysfs {
namespace {

constexpr size_t kMaxFileBytes = 1 << 20;

absl::Status ErrnoStatus(int err, const std::string& what, const std::string& path) {
  const std::string msg = absl::StrCat(what, " ", path, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENODEV:
    case ENXIO:
      return absl::NotFoundError(msg);
    case ENOTDIR:
    case EISDIR:
    case EINVAL:
    case ELOOP:
    case ENAMETOOLONG:
      return absl::InvalidArgumentError(msg);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(msg);
    default:
      return absl::UnavailableError(msg);
  }
}

class RootedFs final : public Fs {
 public:
  explicit RootedFs(std::string root) : root_(std::move(root)) {}

  absl::StatusOr<std::string> ReadFile(const std::string& path) const override {
    auto full = Resolve(path);
    if (!full.ok()) return full.status();
    const int fd = ::open(full->c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus(errno, "open", *full);
    std::string out;
    char buf[4096];
    while (true) {
      const ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n < 0) {
        if (errno == EINTR) continue;
        const int err = errno;
        ::close(fd);
        return ErrnoStatus(err, "read", *full);
      }
      if (n == 0) break;
      out.append(buf, static_cast<size_t>(n));
      if (out.size() > kMaxFileBytes) {
        ::close(fd);
        return absl::ResourceExhaustedError(absl::StrCat("file larger than 1 MiB: ", *full));
      }
    }
    ::close(fd);
    return out;
  }

  absl::StatusOr<std::vector<std::string>> ListDir(const std::string& path) const override {
    auto full = Resolve(path);
    if (!full.ok()) return full.status();
    DIR* dir = ::opendir(full->c_str());
    if (dir == nullptr) return ErrnoStatus(errno, "opendir", *full);
    std::vector<std::string> names;
    errno = 0;
    while (const dirent* e = ::readdir(dir)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    const int err = errno;
    ::closedir(dir);
    if (err != 0) return ErrnoStatus(err, "readdir", *full);
    std::sort(names.begin(), names.end());
    return names;
  }

  absl::StatusOr<std::string> ReadLink(const std::string& path) const override {
    auto full = Resolve(path);
    if (!full.ok()) return full.status();
    std::string buf(4096, '\0');
    const ssize_t n = ::readlink(full->c_str(), buf.data(), buf.size());
    if (n < 0) return ErrnoStatus(errno, "readlink", *full);
    buf.resize(static_cast<size_t>(n));
    return buf;
  }

  bool Exists(const std::string& path) const override {
    auto full = Resolve(path);
    if (!full.ok()) return false;
    struct stat st;
    return ::stat(full->c_str(), &st) == 0;
  }

  std::string root() const override { return root_; }

 private:
  absl::StatusOr<std::string> Resolve(const std::string& path) const {
    auto rel = NormalizeRelative(path);
    if (!rel.ok()) return rel.status();
    if (rel->empty()) return root_;
    return root_ == "/" ? absl::StrCat("/", *rel) : absl::StrCat(root_, "/", *rel);
  }

  std::string root_;
};

}  // namespace

absl::StatusOr<std::string> NormalizeRelative(const std::string& path) {
  if (path.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError("path contains a NUL byte");
  }
  std::vector<std::string> parts;
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    if (part == "..") {
      if (parts.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("path escapes the root: ", path));
      }
      parts.pop_back();
      continue;
    }
    parts.emplace_back(part);
  }
  return absl::StrJoin(parts, "/");
}

std::unique_ptr<Fs> MakeRootedFs(std::string root_in) {
  std::string root = root_in.empty() ? std::string(1, '/') : std::move(root_in);
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(root, ec);
  if (!ec) root = abs.lexically_normal().string();
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  return std::make_unique<RootedFs>(std::move(root));
}

}  // namespace neuron::sysfs
