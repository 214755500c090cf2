// File: tests/sysfs/temp_dir.h
// A real temporary directory for sysfs/inventory tests, removed with everything in it.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace neuron::sysfs::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (Base() / "neuron-sysfs-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

  // Writes `contents` to path()/rel, creating parent directories.
  void Write(const std::string& rel, const std::string& contents) const {
    const std::filesystem::path p = std::filesystem::path(path_) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary | std::ios::trunc) << contents;
  }
  void Symlink(const std::string& target, const std::string& rel) const {
    const std::filesystem::path p = std::filesystem::path(path_) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::filesystem::create_symlink(target, p);
  }

 private:
  // Emulated trees have thousands of small files: prefer tmpfs (/dev/shm) when writable, as
  // disk-backed /tmp is 5-10x slower on loaded CI machines.
  static std::filesystem::path Base() {
    if (::access("/dev/shm", W_OK) == 0) return "/dev/shm";
    return std::filesystem::temp_directory_path();
  }

  std::string path_;
};

}  // namespace neuron::sysfs::testing
