// Layer extraction with libarchive (see layer_extractor.h). Each entry is checked here first
// (names, link targets, types, sizes, symlinks on the way); libarchive's SECURE_* options are
// the second line of defence. libarchive's disk writer works on paths relative to the working
// directory and itself changes the working directory and umask, both process-wide; so the work
// runs on a thread of its own that unshares its filesystem context (CLONE_FS) and moves into
// the destination, leaving the rest of the process alone.
#include "lib/cache/layer_extractor.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/cache/absl_view.h"
#include "lib/cache/layer_overlay.h"
#include "spdlog/spdlog.h"

namespace neuron::cache {
namespace {

using ReaderPtr = std::unique_ptr<archive, decltype(&archive_read_free)>;
using WriterPtr = std::unique_ptr<archive, decltype(&archive_write_free)>;

constexpr int kDiskFlags = ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_UNLINK |
                           ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                           ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS;
constexpr size_t kReadBlock = 64 * 1024;

enum class Kind { kFile, kDir, kSymlink, kHardlink };

absl::Status WithLayer(const std::string& layer, const absl::Status& s) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat("layer ", layer, ": ", s.message()));
}

absl::Status Reject(absl::string_view path, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("entry \"", absl::CHexEscape(path.substr(0, 256)), "\": ", why));
}

absl::StatusOr<Kind> KindOf(archive_entry* e, absl::string_view path) {
  if (archive_entry_hardlink(e) != nullptr) return Kind::kHardlink;
  switch (archive_entry_filetype(e)) {
    case AE_IFREG:
      return Kind::kFile;
    case AE_IFDIR:
      return Kind::kDir;
    case AE_IFLNK:
      return Kind::kSymlink;
    case AE_IFCHR:
      return Reject(path, "character devices are not allowed in a cache image");
    case AE_IFBLK:
      return Reject(path, "block devices are not allowed in a cache image");
    case AE_IFIFO:
      return Reject(path, "FIFOs are not allowed in a cache image");
    case AE_IFSOCK:
      return Reject(path, "sockets are not allowed in a cache image");
    default:
      return Reject(path, "unknown file type");
  }
}

class LayerExtraction {
 public:
  LayerExtraction(const ExtractLimits& limits, ExtractStats& stats,
                  const std::function<bool()>& cancelled)
      : limits_(limits), stats_(stats), cancelled_(cancelled) {}

  // The working directory is the destination root.
  absl::Status Run(int archive_fd);

 private:
  bool Cancelled() const { return cancelled_ && cancelled_(); }
  absl::Status ReadError(absl::string_view during) const;
  absl::Status WriteError(absl::string_view path) const;
  absl::Status Entry(archive_entry* e);
  absl::Status ApplyWhiteoutEntry(const Whiteout& wh);
  absl::Status CheckEntry(archive_entry* e, const std::string& path, Kind kind,
                          std::string& link_target) const;
  absl::Status WriteEntry(archive_entry* e, const std::string& path, Kind kind,
                          const std::string& link_target);
  absl::Status CopyData(const std::string& path, int64_t size);
  void Count(Kind kind, int64_t size);

  const ExtractLimits& limits_;
  ExtractStats& stats_;
  const std::function<bool()>& cancelled_;
  ReaderPtr reader_{nullptr, archive_read_free};
  WriterPtr writer_{nullptr, archive_write_free};
  LayerPaths created_;
};

absl::Status LayerExtraction::ReadError(absl::string_view during) const {
  const int err = archive_errno(reader_.get());
  const char* text = archive_error_string(reader_.get());
  const std::string msg = absl::StrCat("not a valid tar layer (", during,
                                       "): ", text != nullptr ? text : "unknown error");
  if (err == EIO || err == ENOMEM) return absl::UnavailableError(msg);
  return absl::InvalidArgumentError(msg);
}

absl::Status LayerExtraction::WriteError(absl::string_view path) const {
  const int err = archive_errno(writer_.get());
  const char* text = archive_error_string(writer_.get());
  const std::string msg = absl::StrCat("entry \"", absl::CHexEscape(path),
                                       "\": ", text != nullptr ? text : "write failed");
  if (err == ENOSPC || err == EDQUOT) return absl::ResourceExhaustedError(msg);
  if (err == EIO || err == ENOMEM) return absl::UnavailableError(msg);
  return absl::InvalidArgumentError(msg);
}

absl::Status LayerExtraction::Run(int archive_fd) {
  reader_.reset(archive_read_new());
  writer_.reset(archive_write_disk_new());
  if (!reader_ || !writer_) return absl::ResourceExhaustedError("libarchive: out of memory");
  archive* r = reader_.get();
  // The filters libarchive implements in-process; "all" would also run external programs
  // (lrzip, grzip, lzop) on untrusted input.
  archive_read_support_filter_gzip(r);
  archive_read_support_filter_zstd(r);
  archive_read_support_filter_xz(r);
  archive_read_support_filter_lzma(r);
  archive_read_support_filter_bzip2(r);
  archive_read_support_filter_lz4(r);
  archive_read_support_filter_compress(r);
  archive_read_support_format_tar(r);  // ustar, pax, GNU and v7 tar
  archive_read_support_format_empty(r);
  archive_write_disk_set_options(writer_.get(), kDiskFlags);
  if (archive_read_open_fd(r, archive_fd, kReadBlock) != ARCHIVE_OK) return ReadError("open");
  for (;;) {
    if (Cancelled()) return absl::CancelledError("extraction cancelled");
    archive_entry* e = nullptr;
    const int rc = archive_read_next_header(r, &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc < ARCHIVE_WARN) return ReadError("reading an entry header");
    NEURON_RETURN_IF_ERROR(Entry(e));
  }
  // Close applies the deferred directory modes and times, still relative to the destination.
  if (archive_write_close(writer_.get()) < ARCHIVE_WARN) return WriteError("(directory fixups)");
  return absl::OkStatus();
}

absl::Status LayerExtraction::Entry(archive_entry* e) {
  if (++stats_.entries > limits_.max_entries) {
    return absl::InvalidArgumentError(
        absl::StrCat("more than ", limits_.max_entries, " entries in the image"));
  }
  const char* raw = archive_entry_pathname(e);
  if (raw == nullptr) return Reject("", "entry without a usable name");
  NEURON_ASSIGN_OR_RETURN(const std::string path, NormalizeLayerPath(raw));
  NEURON_ASSIGN_OR_RETURN(const Whiteout wh, ClassifyWhiteout(path));
  if (wh.kind != WhiteoutKind::kNone) return ApplyWhiteoutEntry(wh);
  if (path == ".") return absl::OkStatus();  // the root keeps the store's own mode
  NEURON_ASSIGN_OR_RETURN(const Kind kind, KindOf(e, path));
  std::string link_target;
  NEURON_RETURN_IF_ERROR(CheckEntry(e, path, kind, link_target));
  NEURON_RETURN_IF_ERROR(CheckNoSymlinkParents(path));
  NEURON_RETURN_IF_ERROR(ClearConflicting(path, kind == Kind::kDir));
  return WriteEntry(e, path, kind, link_target);
}

absl::Status LayerExtraction::ApplyWhiteoutEntry(const Whiteout& wh) {
  ++stats_.whiteouts;
  switch (wh.kind) {
    case WhiteoutKind::kRemove:
      return ApplyWhiteout(wh.target, created_);
    case WhiteoutKind::kOpaque:
      return ApplyOpaque(wh.target, created_);
    default:
      return absl::OkStatus();  // AUFS bookkeeping: nothing to create or remove
  }
}

absl::Status LayerExtraction::CheckEntry(archive_entry* e, const std::string& path, Kind kind,
                                         std::string& link_target) const {
  if (kind == Kind::kSymlink) {
    const char* target = archive_entry_symlink(e);
    if (target == nullptr) return Reject(path, "symlink without a target");
    NEURON_RETURN_IF_ERROR(CheckSymlinkTarget(path, target));
    link_target = CanonicalSymlinkTarget(target);
    return absl::OkStatus();
  }
  if (kind == Kind::kHardlink) {
    absl::StatusOr<std::string> target = NormalizeLayerPath(archive_entry_hardlink(e));
    if (!target.ok()) {
      return Reject(path, absl::StrCat("hardlink to an invalid path: ", target.status().message()));
    }
    if (*target == ".") return Reject(path, "hardlink to the image root");
    link_target = *target;
    return CheckNoSymlinkParents(link_target);
  }
  if (kind != Kind::kFile) return absl::OkStatus();
  const int64_t size = archive_entry_size_is_set(e) ? archive_entry_size(e) : 0;
  if (size < 0) return Reject(path, "negative size");
  const auto usize = static_cast<uint64_t>(size);
  if (usize > limits_.max_file_bytes) {
    return Reject(path, absl::StrCat("file of ", usize, " bytes is over the limit of ",
                                     limits_.max_file_bytes, " bytes per file"));
  }
  if (usize > limits_.max_total_bytes || stats_.bytes > limits_.max_total_bytes - usize) {
    return Reject(path, absl::StrCat("file of ", usize, " bytes takes the image over the limit of ",
                                     limits_.max_total_bytes, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status LayerExtraction::WriteEntry(archive_entry* e, const std::string& path, Kind kind,
                                         const std::string& link_target) {
  archive_entry_set_pathname(e, path.c_str());
  if (kind == Kind::kSymlink) archive_entry_set_symlink(e, link_target.c_str());
  if (kind == Kind::kHardlink) {
    archive_entry_set_hardlink(e, link_target.c_str());
    archive_entry_set_size(e, 0);  // a link never rewrites its target's data
  }
  // No setuid/setgid/sticky; directories open to every reader of the cache.
  archive_entry_set_perm(e, kind == Kind::kDir ? 0755 : (archive_entry_perm(e) & 0777));
  archive_entry_xattr_clear(e);
  archive_entry_acl_clear(e);
  archive_entry_set_fflags(e, 0, 0);
  const int64_t size = kind == Kind::kFile ? archive_entry_size(e) : 0;
  if (archive_write_header(writer_.get(), e) != ARCHIVE_OK) return WriteError(path);
  if (kind == Kind::kFile && size > 0) NEURON_RETURN_IF_ERROR(CopyData(path, size));
  if (archive_write_finish_entry(writer_.get()) < ARCHIVE_WARN) return WriteError(path);
  created_.Add(path);
  Count(kind, size);
  return absl::OkStatus();
}

absl::Status LayerExtraction::CopyData(const std::string& path, int64_t size) {
  for (;;) {
    if (Cancelled()) return absl::CancelledError("extraction cancelled");
    const void* buf = nullptr;
    size_t len = 0;
    la_int64_t offset = 0;
    const int rc = archive_read_data_block(reader_.get(), &buf, &len, &offset);
    if (rc == ARCHIVE_EOF) return absl::OkStatus();
    if (rc < ARCHIVE_WARN) return ReadError(absl::StrCat("data of \"", path, "\""));
    if (offset < 0 || static_cast<uint64_t>(offset) + len > static_cast<uint64_t>(size)) {
      return Reject(path, "data beyond the size in its header");
    }
    if (archive_write_data_block(writer_.get(), buf, len, offset) < ARCHIVE_OK) {
      return WriteError(path);
    }
  }
}

void LayerExtraction::Count(Kind kind, int64_t size) {
  switch (kind) {
    case Kind::kFile:
      ++stats_.files;
      stats_.bytes += static_cast<uint64_t>(size);
      break;
    case Kind::kDir:
      ++stats_.dirs;
      break;
    case Kind::kSymlink:
      ++stats_.symlinks;
      break;
    case Kind::kHardlink:
      ++stats_.hardlinks;
      break;
  }
}

// Serialises extractions that could not get a working directory of their own.
std::mutex& SharedCwdMutex() {
  static std::mutex mu;
  return mu;
}

absl::Status ExtractOnThisThread(int archive_fd, int dest_fd, const ExtractLimits& limits,
                                 ExtractStats& stats, const std::function<bool()>& cancelled) {
  std::unique_lock<std::mutex> shared_cwd;
  int saved_cwd = -1;
  if (::unshare(CLONE_FS) != 0) {
    // A seccomp profile may forbid unshare; fall back to the process's directory, one at a time.
    static std::once_flag warned;
    std::call_once(warned, [] {
      spdlog::warn(
          "layer extraction: unshare(CLONE_FS) failed ({}); extractions will change the "
          "process working directory one at a time",
          std::strerror(errno));
    });
    shared_cwd = std::unique_lock<std::mutex>(SharedCwdMutex());
    saved_cwd = ::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  absl::Status s;
  if (::fchdir(dest_fd) != 0) {
    s = absl::UnavailableError(absl::StrCat("enter destination: ", std::strerror(errno)));
  } else {
    s = LayerExtraction(limits, stats, cancelled).Run(archive_fd);
  }
  if (saved_cwd >= 0) {
    if (::fchdir(saved_cwd) != 0) spdlog::error("layer extraction: cannot restore the cwd");
    ::close(saved_cwd);
  }
  return s;
}

}  // namespace

absl::Status ExtractLayer(const std::string& archive_path, const std::string& dest_root,
                          const ExtractLimits& limits, ExtractStats& stats,
                          const std::function<bool()>& cancelled) {
  const int dest_fd = ::open(dest_root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dest_fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("open destination ", dest_root, ": ", std::strerror(errno)));
  }
  const int archive_fd = ::open(archive_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (archive_fd < 0) {
    const int err = errno;
    ::close(dest_fd);
    return absl::Status(
        err == ENOENT ? absl::StatusCode::kNotFound : absl::StatusCode::kUnavailable,
        absl::StrCat("open layer ", archive_path, ": ", std::strerror(err)));
  }
  absl::Status s;
  try {
    std::thread worker(
        [&] { s = ExtractOnThisThread(archive_fd, dest_fd, limits, stats, cancelled); });
    worker.join();
  } catch (const std::exception& ex) {  // std::system_error: no thread could be started
    s = absl::UnavailableError(absl::StrCat("start an extraction thread: ", ex.what()));
  }
  ::close(archive_fd);
  ::close(dest_fd);
  return WithLayer(archive_path, s);
}

}  // namespace neuron::cache
