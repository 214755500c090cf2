// File: lib/sysfs/file_probe.cc
#include "lib/sysfs/file_probe.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "lib/sysfs/parsers.h"

namespace neuron::sysfs {

absl::StatusOr<int> FileProbe::Add(const std::string& path) {
  absl::StatusOr<std::string> rel = NormalizeRelative(path);
  if (!rel.ok()) return rel.status();
  paths_.push_back(root_ == "/" ? absl::StrCat("/", *rel) : absl::StrCat(root_, "/", *rel));
  return static_cast<int>(paths_.size()) - 1;
}

std::optional<uint64_t> FileProbe::ReadU64(int handle) const {
  const int fd = ::open(paths_[handle].c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[64];  // a counter is at most 20 digits and a newline
  ssize_t n;
  do {
    n = ::read(fd, buf, sizeof(buf));
  } while (n < 0 && errno == EINTR);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  absl::StatusOr<uint64_t> v = ParseU64(absl::string_view(buf, static_cast<size_t>(n)));
  if (!v.ok()) return std::nullopt;
  return *v;
}

bool FileProbe::Exists(int handle) const {
  struct stat st;
  return ::stat(paths_[handle].c_str(), &st) == 0;
}

absl::string_view FileProbe::LinkBasename(int handle) const {
  const ssize_t n = ::readlink(paths_[handle].c_str(), link_buf_, sizeof(link_buf_));
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(link_buf_)) return {};
  absl::string_view target(link_buf_, static_cast<size_t>(n));
  const size_t slash = target.rfind('/');
  return slash == absl::string_view::npos ? target : target.substr(slash + 1);
}

}  // namespace neuron::sysfs
