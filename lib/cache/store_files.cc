// Crash-safe file writes for the cache store (see store_files.h).
#include "lib/cache/store_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/cache/absl_view.h"

namespace neuron::cache {
namespace {

namespace fs = std::filesystem;

absl::Status WriteAll(int fd, std::string_view content, const std::string& path) {
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("write", path, errno);
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

std::string DirOf(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

}  // namespace

absl::Status ErrnoStatus(std::string_view what, const std::string& path, int err) {
  const std::string text = absl::StrCat(Sv(what), " ", path, ": ", std::strerror(err));
  if (err == ENOENT) return absl::NotFoundError(text);
  if (err == ENOSPC || err == EDQUOT) return absl::ResourceExhaustedError(text);
  return absl::UnavailableError(text);
}

absl::Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open directory", dir, errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  return rc == 0 ? absl::OkStatus() : ErrnoStatus("fsync", dir, err);
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view content) {
  const fs::path target(path);
  // Not derived from the file name: a 255-byte name must still leave room for a temp name.
  std::string temp = (target.parent_path() / ".tmp.XXXXXX").string();
  std::vector<char> buf(temp.begin(), temp.end());
  buf.push_back('\0');
  const int fd = ::mkostemp(buf.data(), O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("create a temporary file for", path, errno);
  temp.assign(buf.data());
  absl::Status s = WriteAll(fd, content, temp);
  // mkostemp makes 0600; the drivers reading these files may run as other users.
  if (s.ok() && ::fchmod(fd, 0644) != 0) s = ErrnoStatus("chmod", temp, errno);
  if (s.ok() && ::fsync(fd) != 0) s = ErrnoStatus("fsync", temp, errno);
  if (::close(fd) != 0 && s.ok()) s = ErrnoStatus("close", temp, errno);
  if (s.ok() && std::rename(temp.c_str(), path.c_str()) != 0) {
    s = ErrnoStatus(absl::StrCat("rename ", temp, " ->"), path, errno);
  }
  if (!s.ok()) {
    ::unlink(temp.c_str());
    return s;
  }
  return SyncDirectory(DirOf(path));
}

absl::StatusOr<std::string> ReadSmallFile(const std::string& path, size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return ErrnoStatus("open", path, errno);
  std::string out;
  char buf[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return ErrnoStatus("read", path, err);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      ::close(fd);
      return absl::DataLossError(absl::StrCat(path, ": larger than ", max_bytes, " bytes"));
    }
  }
  ::close(fd);
  return out;
}

absl::Status RemoveFileDurably(const std::string& path) {
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return ErrnoStatus("remove", path, errno);
  }
  return SyncDirectory(DirOf(path));
}

}  // namespace neuron::cache
