#include "lib/dra/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"

namespace neuron::dra {
namespace {

namespace fs = std::filesystem;

absl::Status Errno(std::string_view what, const std::string& path, int err) {
  const std::string text = absl::StrCat(std::string(what), " ", path, ": ", std::strerror(err));
  return err == ENOENT ? absl::NotFoundError(text) : absl::UnavailableError(text);
}

absl::Status WriteAll(int fd, std::string_view content, const std::string& path) {
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("write", path, errno);
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("open directory", dir, errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  return rc == 0 ? absl::OkStatus() : Errno("fsync", dir, err);
}

std::string DirOf(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

absl::Status WriteTemp(const std::string& temp, std::string_view content) {
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("create", temp, errno);
  absl::Status s = WriteAll(fd, content, temp);
  if (s.ok() && ::fsync(fd) != 0) s = Errno("fsync", temp, errno);
  if (::close(fd) != 0 && s.ok()) s = Errno("close", temp, errno);
  return s;
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, std::string_view content) {
  const fs::path target(path);
  const std::string temp =
      (target.parent_path() / absl::StrCat(".", target.filename().string(), ".tmp")).string();
  if (absl::Status s = WriteTemp(temp, content); !s.ok()) {
    ::unlink(temp.c_str());
    return s;
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    return Errno(absl::StrCat("rename ", temp, " ->"), path, err);
  }
  return SyncDirectory(DirOf(path));
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno("open", path, errno);
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return Errno("read", path, err);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

absl::Status RemoveFileDurably(const std::string& path) {
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return Errno("remove", path, errno);
  }
  return SyncDirectory(DirOf(path));
}

}  // namespace neuron::dra
