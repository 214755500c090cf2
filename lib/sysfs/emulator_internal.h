// File: lib/sysfs/emulator_internal.h
// Pieces of the emulated tree shared by emulator.cc (whole tree) and emulator_faults.cc
// (per-device faults and restores). Not part of the module's contract.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>

#include "absl/status/status.h"
#include "lib/sysfs/emulator.h"

namespace neuron::sysfs::emulator_internal {

// root + "/" + rel, without doubling slashes.
std::string Join(const std::string& root, const std::string& rel);
// mkdir -p of the parent, then an atomic write (temp file + rename).
absl::Status WriteFileAtomic(const std::string& path, const std::string& contents);
absl::Status MakeDirs(const std::string& path);
// Replaces any existing entry at `link` with a symlink to `target`.
absl::Status MakeSymlink(const std::string& target, const std::string& link);
// rm -rf, NotFound-tolerant.
absl::Status RemoveAll(const std::string& path);

// Writes files with as few syscalls as possible (directories are created once, files are
// written in place) for fresh trees; in atomic mode each file is written to a temp name and
// renamed, so a concurrent reader never sees a half-written value (fault injection).
class TreeWriter {
 public:
  explicit TreeWriter(bool atomic) : atomic_(atomic) {}
  ~TreeWriter();
  TreeWriter(const TreeWriter&) = delete;
  TreeWriter& operator=(const TreeWriter&) = delete;
  absl::Status File(const std::string& path, const std::string& contents);
  absl::Status Dir(const std::string& path);

 private:
  // An O_PATH fd of directory `dir` (cached for the last directory written to), or -1.
  int DirFd(const std::string& dir);

  bool atomic_;
  std::unordered_set<std::string> made_;
  std::string fd_dir_;
  int fd_ = -1;
};

// "pci0000:10" for EmulatedPciAddress(i)'s bus.
std::string HostBridgeName(int index);
// Relative path (from root) of the PCI function's real directory.
std::string PciDeviceRealDir(int index);
// Relative path (from root) of the neuron class device's real directory.
std::string NeuronVirtualDir(int index);

// Writes the PCI function of device `index` (real dir, bus link, driver links when bound).
absl::Status WritePciFunction(TreeWriter& w, const std::string& root, const EmulationSpec& spec,
                              int index, bool bound);
// Writes sys/devices/virtual/neuron_device/neuron<index>, its class link and dev/neuron<index>.
absl::Status WriteNeuronDevice(TreeWriter& w, const std::string& root, const EmulationSpec& spec,
                               int index);
// The scramble seed recorded in root's marker file (0 when unreadable).
uint64_t RecordedScrambleSeed(const std::string& root);
// Removes what WriteNeuronDevice wrote.
absl::Status RemoveNeuronDevice(const std::string& root, int index);

}  // namespace neuron::sysfs::emulator_internal
