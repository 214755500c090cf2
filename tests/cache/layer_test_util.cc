// Test helpers for the cache store suites (see layer_test_util.h).
#include "tests/cache/layer_test_util.h"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace neuron::cache::testing {
namespace {

namespace fs = std::filesystem;

void Check(int rc, archive* a, const char* what) {
  if (rc < ARCHIVE_WARN) {
    throw std::runtime_error(std::string(what) + ": " + archive_error_string(a));
  }
}

void FillEntry(archive_entry* e, const TarEntry& t) {
  archive_entry_set_pathname(e, t.name.c_str());
  archive_entry_set_perm(e, t.mode);
  archive_entry_set_mtime(e, 1700000000, 0);
  switch (t.type) {
    case TarEntry::Type::kFile:
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_size(e, static_cast<la_int64_t>(t.data.size()));
      break;
    case TarEntry::Type::kDir:
      archive_entry_set_filetype(e, AE_IFDIR);
      break;
    case TarEntry::Type::kSymlink:
      archive_entry_set_filetype(e, AE_IFLNK);
      archive_entry_set_symlink(e, t.link.c_str());
      break;
    case TarEntry::Type::kHardlink:
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_hardlink(e, t.link.c_str());
      break;
    case TarEntry::Type::kCharDevice:
      archive_entry_set_filetype(e, AE_IFCHR);
      archive_entry_set_rdev(e, makedev(1, 3));
      break;
    case TarEntry::Type::kFifo:
      archive_entry_set_filetype(e, AE_IFIFO);
      break;
  }
}

}  // namespace

ScratchDir::ScratchDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/cache-store-test.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

TarEntry File(std::string name, std::string data, int mode) {
  return TarEntry{std::move(name), TarEntry::Type::kFile, std::move(data), "", mode};
}
TarEntry Dir(std::string name, int mode) {
  return TarEntry{std::move(name), TarEntry::Type::kDir, "", "", mode};
}
TarEntry Symlink(std::string name, std::string target) {
  return TarEntry{std::move(name), TarEntry::Type::kSymlink, "", std::move(target), 0777};
}
TarEntry Hardlink(std::string name, std::string target) {
  return TarEntry{std::move(name), TarEntry::Type::kHardlink, "", std::move(target), 0644};
}

void WriteLayer(const std::string& path, const std::vector<TarEntry>& entries,
                Compression compression) {
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  if (compression == Compression::kGzip) archive_write_add_filter_gzip(a);
  if (compression == Compression::kZstd) archive_write_add_filter_zstd(a);
  Check(archive_write_open_filename(a, path.c_str()), a, "open");
  for (const TarEntry& t : entries) {
    archive_entry* e = archive_entry_new();
    FillEntry(e, t);
    Check(archive_write_header(a, e), a, "header");
    if (t.type == TarEntry::Type::kFile && !t.data.empty()) {
      archive_write_data(a, t.data.data(), t.data.size());
    }
    archive_entry_free(e);
  }
  Check(archive_write_close(a), a, "close");
  archive_write_free(a);
}

std::map<std::string, std::string> Snapshot(const std::string& root) {
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    struct stat st {};
    ::lstat(it->path().c_str(), &st);
    std::ostringstream desc;
    desc << std::oct << st.st_mode << std::dec << " " << st.st_size << " ";
    if (S_ISLNK(st.st_mode)) desc << fs::read_symlink(it->path()).string();
    if (S_ISREG(st.st_mode)) desc << ReadFile(it->path().string());
    out[fs::relative(it->path(), root).string()] = desc.str();
  }
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::string& data) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

int Shell(const std::string& command) { return std::system(command.c_str()); }

}  // namespace neuron::cache::testing
