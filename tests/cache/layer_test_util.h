// Test helpers for the cache store suites: scratch directories, layer archives written with
// libarchive's own writer (hostile ones included), and directory snapshots to prove a hostile
// layer changed nothing outside its destination.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace neuron::cache::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Sub(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

struct TarEntry {
  enum class Type { kFile, kDir, kSymlink, kHardlink, kCharDevice, kFifo };
  std::string name;
  Type type = Type::kFile;
  std::string data;  // kFile contents
  std::string link;  // kSymlink / kHardlink target
  int mode = 0644;
};

TarEntry File(std::string name, std::string data, int mode = 0644);
TarEntry Dir(std::string name, int mode = 0755);
TarEntry Symlink(std::string name, std::string target);
TarEntry Hardlink(std::string name, std::string target);

enum class Compression { kNone, kGzip, kZstd };

// Writes a pax tar with `entries`, names exactly as given (no sanitising).
void WriteLayer(const std::string& path, const std::vector<TarEntry>& entries,
                Compression compression = Compression::kNone);

// Every object under `root` (relative path -> type, mode, size and contents or link target).
std::map<std::string, std::string> Snapshot(const std::string& root);

std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& data);
// Runs a shell command; returns its exit status.
int Shell(const std::string& command);

}  // namespace neuron::cache::testing
