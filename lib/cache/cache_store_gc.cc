// CacheStore: garbage collection of images no cache wants and no user holds.
#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/cache/cache_store.h"
#include "lib/cache/store_files.h"
#include "spdlog/spdlog.h"

namespace neuron::cache {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<std::set<std::string>> Referenced(const CacheStore& store,
                                                 const std::set<std::string>& keep) {
  std::set<std::string> wanted = keep;
  NEURON_ASSIGN_OR_RETURN(const std::vector<RefInfo> refs, store.ListRefs());
  for (const RefInfo& ref : refs) wanted.insert(ref.digest);
  return wanted;
}

}  // namespace

std::set<std::string> CacheStore::ImageDigests() const {
  std::set<std::string> digests;
  std::error_code ec;
  for (fs::directory_iterator it(Dir("images/sha256"), ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string digest = absl::StrCat("sha256:", it->path().filename().string());
    if (ValidateDigest(digest).ok() && it->symlink_status(ec).type() == fs::file_type::directory) {
      digests.insert(digest);
    }
  }
  return digests;
}

absl::StatusOr<std::string> CacheStore::HideImage(const std::string& digest) {
  // A fresh empty directory in staging/ as the rename target: rename replaces an empty one.
  NEURON_ASSIGN_OR_RETURN(const std::string hidden, NewStagingDir(digest));
  const std::string image = ImagePath(digest);
  if (::rename(image.c_str(), hidden.c_str()) != 0) {
    const int err = errno;
    DiscardStaging(hidden);
    return ErrnoStatus(absl::StrCat("rename ", image, " ->"), hidden, err);
  }
  NEURON_RETURN_IF_ERROR(SyncDirectory(Dir("images/sha256")));
  return hidden;
}

absl::Status CacheStore::RestoreImage(const std::string& digest, const std::string& hidden) {
  const std::string image = ImagePath(digest);
  if (::rename(hidden.c_str(), image.c_str()) != 0) {
    return ErrnoStatus(absl::StrCat("restore ", hidden, " ->"), image, errno);
  }
  spdlog::info("cache store: image gained a user during garbage collection, kept digest={}",
               digest);
  return SyncDirectory(Dir("images/sha256"));
}

absl::Status CacheStore::RemoveOrphanInfos(const std::set<std::string>& wanted) {
  std::error_code ec;
  std::vector<std::string> orphans;
  for (fs::directory_iterator it(Dir("images/sha256"), ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string file = it->path().filename().string();
    if (!absl::EndsWith(file, ".json")) continue;
    const std::string digest = absl::StrCat("sha256:", file.substr(0, file.size() - 5));
    if (ValidateDigest(digest).ok() && !HasImage(digest) && wanted.count(digest) == 0) {
      orphans.push_back(it->path().string());
    }
  }
  for (const std::string& path : orphans) NEURON_RETURN_IF_ERROR(RemoveFileDurably(path));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> CacheStore::GarbageCollect(
    const std::set<std::string>& keep) {
  NEURON_ASSIGN_OR_RETURN(const std::set<std::string> wanted, Referenced(*this, keep));
  std::vector<std::pair<std::string, std::string>> hidden;  // digest, staging path
  for (const std::string& digest : ImageDigests()) {
    if (wanted.count(digest) > 0) continue;
    NEURON_ASSIGN_OR_RETURN(std::string path, HideImage(digest));
    hidden.emplace_back(digest, std::move(path));
  }
  // A user that added its ref after the first look either sees the image gone (and retries)
  // or is seen now.
  absl::StatusOr<std::set<std::string>> now = Referenced(*this, keep);
  std::vector<std::string> removed;
  for (const auto& [digest, path] : hidden) {
    if (!now.ok() || now->count(digest) > 0) {
      NEURON_RETURN_IF_ERROR(RestoreImage(digest, path));
      continue;
    }
    NEURON_RETURN_IF_ERROR(RemoveFileDurably(absl::StrCat(ImagePath(digest), ".json")));
    DiscardStaging(path);
    spdlog::info("cache store: removed unused image digest={}", digest);
    removed.push_back(digest);
  }
  if (!now.ok()) return now.status();
  NEURON_RETURN_IF_ERROR(RemoveOrphanInfos(*now));
  return removed;
}

}  // namespace neuron::cache
