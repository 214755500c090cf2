// CacheStore: the CacheEntry files under entries/ and the ref files under refs/.
#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/cache/absl_view.h"
#include "lib/cache/cache_store.h"
#include "lib/cache/store_files.h"
#include "spdlog/spdlog.h"

namespace neuron::cache {
namespace {

namespace fs = std::filesystem;

constexpr absl::string_view kJson = ".json";
constexpr absl::string_view kClusterNamespace = "_";

// The names of the visible *.json files in `dir` (without the suffix); temp files are hidden.
absl::StatusOr<std::vector<std::string>> JsonNames(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return names;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string file = it->path().filename().string();
    if (file.empty() || file[0] == '.' || !absl::EndsWith(file, kJson)) continue;
    names.push_back(file.substr(0, file.size() - kJson.size()));
  }
  if (ec) return absl::UnavailableError(absl::StrCat("list ", dir, ": ", ec.message()));
  return names;
}

// "<name>.json" must fit the 255-byte file name limit of Linux filesystems, which leaves 250
// of the 253 characters a Kubernetes name may have.
absl::Status CheckFileName(std::string_view what, std::string_view name) {
  NEURON_RETURN_IF_ERROR(ValidateName(what, name));
  constexpr size_t kMaxFileName = 255;
  if (name.size() + kJson.size() <= kMaxFileName) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(Sv(what), " \"", Sv(name), "\" is ", name.size(),
                   " characters; the node cache stores at most 250 (it is a file name)"));
}

absl::StatusOr<std::vector<std::string>> SubdirNames(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return names;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->symlink_status(ec).type() == fs::file_type::directory) {
      names.push_back(it->path().filename().string());
    }
  }
  if (ec) return absl::UnavailableError(absl::StrCat("list ", dir, ": ", ec.message()));
  return names;
}

absl::Status CreateDirs(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("create ", dir, ": ", ec.message()));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> CacheStore::EntryPath(const CacheKey& key) const {
  NEURON_RETURN_IF_ERROR(CheckFileName("cache name", key.name));
  absl::string_view ns = kClusterNamespace;
  if (key.kind == CacheKind::kNamespaced) {
    NEURON_RETURN_IF_ERROR(ValidateName("namespace", key.namespace_));
    ns = key.namespace_;
  }
  return absl::StrCat(Dir("entries"), "/", Sv(CacheKindName(key.kind)), "/", ns, "/", key.name,
                      kJson);
}

absl::Status CacheStore::WriteEntry(const CacheKey& key, const CacheEntry& entry) {
  NEURON_ASSIGN_OR_RETURN(const std::string path, EntryPath(key));
  if (!entry.digest.empty()) NEURON_RETURN_IF_ERROR(ValidateDigest(entry.digest));
  NEURON_RETURN_IF_ERROR(CreateDirs(fs::path(path).parent_path().string()));
  return WriteFileAtomically(path, CacheEntryToJson(entry));
}

absl::StatusOr<std::optional<CacheEntry>> CacheStore::ReadEntry(const CacheKey& key) const {
  NEURON_ASSIGN_OR_RETURN(const std::string path, EntryPath(key));
  absl::StatusOr<std::string> text = ReadSmallFile(path);
  if (absl::IsNotFound(text.status())) return std::optional<CacheEntry>();
  if (!text.ok()) return text.status();
  NEURON_ASSIGN_OR_RETURN(CacheEntry entry, CacheEntryFromJson(*text, path));
  return std::optional<CacheEntry>(std::move(entry));
}

absl::StatusOr<std::vector<std::pair<CacheKey, CacheEntry>>> CacheStore::ListEntries() const {
  std::vector<std::pair<CacheKey, CacheEntry>> out;
  for (CacheKind kind : {CacheKind::kNamespaced, CacheKind::kCluster}) {
    const std::string kind_dir = absl::StrCat(Dir("entries"), "/", Sv(CacheKindName(kind)));
    NEURON_ASSIGN_OR_RETURN(const std::vector<std::string> namespaces, SubdirNames(kind_dir));
    for (const std::string& ns : namespaces) {
      if (kind == CacheKind::kCluster && ns != kClusterNamespace) continue;
      NEURON_ASSIGN_OR_RETURN(const std::vector<std::string> names,
                              JsonNames(absl::StrCat(kind_dir, "/", ns)));
      for (const std::string& name : names) {
        const CacheKey key{kind, kind == CacheKind::kCluster ? "" : ns, name};
        absl::StatusOr<std::optional<CacheEntry>> entry = ReadEntry(key);
        if (!entry.ok() || !entry->has_value()) {
          spdlog::warn("cache store: skipping entry key={} error={}", key.ToString(),
                       entry.ok() ? "vanished" : entry.status().ToString());
          continue;
        }
        out.emplace_back(key, std::move(**entry));
      }
    }
  }
  return out;
}

absl::Status CacheStore::RemoveEntry(const CacheKey& key) {
  NEURON_ASSIGN_OR_RETURN(const std::string path, EntryPath(key));
  return RemoveFileDurably(path);
}

absl::Status CacheStore::AddRef(const RefInfo& ref) {
  NEURON_RETURN_IF_ERROR(CheckFileName("ref id", ref.id));
  NEURON_RETURN_IF_ERROR(ValidateDigest(ref.digest));
  if (ref.user != "csi" && ref.user != "dra") {
    return absl::InvalidArgumentError(
        absl::StrCat("ref ", ref.id, ": user \"", ref.user, "\" is neither csi nor dra"));
  }
  return WriteFileAtomically(absl::StrCat(Dir("refs"), "/", ref.id, kJson), RefInfoToJson(ref));
}

absl::Status CacheStore::RemoveRef(std::string_view id) {
  NEURON_RETURN_IF_ERROR(CheckFileName("ref id", id));
  return RemoveFileDurably(absl::StrCat(Dir("refs"), "/", Sv(id), kJson));
}

absl::StatusOr<std::vector<RefInfo>> CacheStore::ListRefs() const {
  NEURON_ASSIGN_OR_RETURN(const std::vector<std::string> ids, JsonNames(Dir("refs")));
  std::vector<RefInfo> out;
  for (const std::string& id : ids) {
    const std::string path = absl::StrCat(Dir("refs"), "/", Sv(id), kJson);
    absl::StatusOr<std::string> text = ReadSmallFile(path);
    if (absl::IsNotFound(text.status())) continue;  // removed while we listed
    if (!text.ok()) return text.status();
    NEURON_ASSIGN_OR_RETURN(RefInfo ref, RefInfoFromJson(*text, path));
    ref.id = id;
    out.push_back(std::move(ref));
  }
  return out;
}

}  // namespace neuron::cache
