// CacheStore: directories, images and staging (see cache_store.h). Entries and refs are in
// cache_store_records.cc, garbage collection in cache_store_gc.cc.
#include "lib/cache/cache_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/cache/absl_view.h"
#include "lib/cache/store_files.h"
#include "spdlog/spdlog.h"

namespace neuron::cache {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSubdirs[] = {"images/sha256", "staging", "downloads", "entries", "refs"};

// mkdtemp/mkstemp on a std::string template.
absl::StatusOr<std::string> MakeTemp(const std::string& pattern, bool dir) {
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (dir) {
    if (::mkdtemp(buf.data()) == nullptr) return ErrnoStatus("create", pattern, errno);
    // mkdtemp makes 0700; a committed image must be readable by the drivers' users.
    ::chmod(buf.data(), 0755);
  } else {
    const int fd = ::mkostemp(buf.data(), O_CLOEXEC);
    if (fd < 0) return ErrnoStatus("create", pattern, errno);
    ::close(fd);
  }
  return std::string(buf.data());
}

// Flushes everything written under `dir` (the whole filesystem: one call instead of an fsync
// per extracted file).
absl::Status SyncTree(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open", dir, errno);
  const int rc = ::syncfs(fd);
  const int err = errno;
  ::close(fd);
  return rc == 0 ? absl::OkStatus() : ErrnoStatus("syncfs", dir, err);
}

}  // namespace

CacheStore::CacheStore(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string CacheStore::Dir(std::string_view sub) const {
  return absl::StrCat(root_, "/", Sv(sub));
}

absl::Status CacheStore::Init() {
  for (const char* sub : kSubdirs) {
    std::error_code ec;
    fs::create_directories(Dir(sub), ec);
    if (ec) {
      return absl::UnavailableError(
          absl::StrCat("create cache directory ", Dir(sub), ": ", ec.message()));
    }
  }
  NEURON_RETURN_IF_ERROR(EmptyDir("staging"));
  return EmptyDir("downloads");
}

absl::Status CacheStore::EmptyDir(std::string_view sub) {
  const std::string dir = Dir(sub);
  std::error_code ec;
  std::vector<fs::path> leftovers;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    leftovers.push_back(it->path());
  }
  if (ec) return absl::UnavailableError(absl::StrCat("list ", dir, ": ", ec.message()));
  for (const fs::path& p : leftovers) {
    spdlog::info("cache store: removing leftover of an earlier run path={}", p.string());
    fs::remove_all(p, ec);
    if (ec) return absl::UnavailableError(absl::StrCat("remove ", p.string(), ": ", ec.message()));
  }
  return absl::OkStatus();
}

std::string CacheStore::ImagePath(std::string_view digest) const {
  if (!ValidateDigest(digest).ok()) return "";
  return absl::StrCat(Dir("images/sha256"), "/", Sv(DigestHex(digest)));
}

bool CacheStore::HasImage(std::string_view digest) const {
  const std::string path = ImagePath(digest);
  struct stat st {};
  return !path.empty() && ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

absl::StatusOr<ImageInfo> CacheStore::ReadImageInfo(std::string_view digest) const {
  NEURON_RETURN_IF_ERROR(ValidateDigest(digest));
  if (!HasImage(digest)) {
    return absl::NotFoundError(absl::StrCat("image ", Sv(digest), " is not in the cache store"));
  }
  const std::string path = absl::StrCat(ImagePath(digest), ".json");
  NEURON_ASSIGN_OR_RETURN(const std::string text, ReadSmallFile(path));
  return ImageInfoFromJson(text, path);
}

absl::StatusOr<std::string> CacheStore::NewStagingDir(std::string_view digest) {
  NEURON_RETURN_IF_ERROR(ValidateDigest(digest));
  return MakeTemp(absl::StrCat(Dir("staging"), "/", Sv(DigestHex(digest)), ".XXXXXX"), true);
}

absl::Status CacheStore::CheckStagingPath(const std::string& staging_dir) const {
  const std::string prefix = Dir("staging/");
  const std::string_view name =
      std::string_view(staging_dir)
          .substr(absl::StartsWith(staging_dir, prefix) ? prefix.size() : 0);
  if (!absl::StartsWith(staging_dir, prefix) || name.empty() ||
      name.find('/') != std::string_view::npos || name[0] == '.') {
    return absl::InvalidArgumentError(
        absl::StrCat(staging_dir, " is not a staging directory under ", Dir("staging")));
  }
  return absl::OkStatus();
}

absl::Status CacheStore::CommitStaging(const std::string& staging_dir, const ImageInfo& info) {
  NEURON_RETURN_IF_ERROR(ValidateDigest(info.digest));
  NEURON_RETURN_IF_ERROR(CheckStagingPath(staging_dir));
  if (!absl::StartsWith(staging_dir.substr(Dir("staging/").size()),
                        absl::StrCat(Sv(DigestHex(info.digest)), "."))) {
    return absl::InvalidArgumentError(
        absl::StrCat(staging_dir, " was not made for image ", info.digest));
  }
  if (HasImage(info.digest)) {
    DiscardStaging(staging_dir);
    return absl::OkStatus();
  }
  NEURON_RETURN_IF_ERROR(SyncTree(staging_dir));
  const std::string image = ImagePath(info.digest);
  // The info goes first: whenever the image directory exists, so does its info.
  NEURON_RETURN_IF_ERROR(WriteFileAtomically(absl::StrCat(image, ".json"), ImageInfoToJson(info)));
  if (::rename(staging_dir.c_str(), image.c_str()) != 0) {
    const int err = errno;
    if ((err == ENOTEMPTY || err == EEXIST) && HasImage(info.digest)) {
      DiscardStaging(staging_dir);  // another commit of the same image won
      return absl::OkStatus();
    }
    return ErrnoStatus(absl::StrCat("rename ", staging_dir, " ->"), image, err);
  }
  NEURON_RETURN_IF_ERROR(SyncDirectory(Dir("images/sha256")));
  return SyncDirectory(Dir("staging"));
}

void CacheStore::DiscardStaging(const std::string& staging_dir) {
  if (absl::Status s = CheckStagingPath(staging_dir); !s.ok()) {
    spdlog::error("cache store: not discarding {}", s.ToString());
    return;
  }
  std::error_code ec;
  fs::remove_all(staging_dir, ec);
  if (ec) spdlog::warn("cache store: remove {}: {}", staging_dir, ec.message());
}

absl::StatusOr<std::string> CacheStore::NewDownloadPath() {
  return MakeTemp(absl::StrCat(Dir("downloads"), "/blob.XXXXXX"), false);
}

}  // namespace neuron::cache
