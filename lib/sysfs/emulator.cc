// File: lib/sysfs/emulator.cc
// Writes emulated PCI + Neuron driver trees (layout documented in emulator.h). Values are
// deterministic functions of the device/core index so tests can predict them.
#include "lib/sysfs/emulator.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "lib/base/status_macros.h"
#include "lib/sysfs/device_leaves.h"
#include "lib/sysfs/emulator_internal.h"
#include "lib/sysfs/neuron_driver.h"

namespace neuron::sysfs {
namespace emulator_internal {
namespace {

namespace stdfs = std::filesystem;

constexpr uint16_t kVendor = 0x1d0f;
constexpr uint32_t kClass = 0x088000;  // System peripheral / other, as Neuron chips report
constexpr int kNeuronMajor = 238;
constexpr char kMarker[] = ".neuron-emulated";

absl::Status FsError(const std::error_code& ec, const std::string& what, const std::string& p) {
  return absl::UnavailableError(absl::StrCat(what, " ", p, ": ", ec.message()));
}

struct Arch {
  const char* nd;
  const char* nc;
  const char* instance;
  const char* device_name;
  bool has_serial;
};

// Strings the driver prints per generation (neuron_dhal_v{1,2,3}.c). Trainium3 is not in the
// driver commit we read (DRV); its strings follow the same pattern and are a guess.
Arch ArchFor(uint16_t device_id) {
  switch (device_id) {
    case 0x7064:
    case 0x7065:
    case 0x7066:
    case 0x7067:
      return {"NDv1", "NCv1", "Inf1", "Inferentia", false};
    case 0x7164:
      return {"NDv2", "NCv2", "Trn1", "Trainium1", true};
    case 0x7264:
      return {"NDv3", "NCv2", "Inf2", "Inferentia2", true};
    case 0x7364:
      return {"NDv3", "NCv3", "Trn2", "Trainium2", true};
    default:
      return {"NDv4", "NCv4", "Trn3", "Trainium3", true};
  }
}

std::string Config(const EmulationSpec& spec) {
  std::string c(256, '\0');
  auto put16 = [&c](size_t off, uint16_t v) {
    c[off] = static_cast<char>(v & 0xff);
    c[off + 1] = static_cast<char>(v >> 8);
  };
  auto put32 = [&c](size_t off, uint32_t v) {
    for (size_t i = 0; i < 4; ++i) c[off + i] = static_cast<char>((v >> (8 * i)) & 0xff);
  };
  put16(0x00, kVendor);
  put16(0x02, spec.pci_device_id);
  put16(0x04, 0x0006);                                 // command: memory space + bus master
  put16(0x06, 0x0000);                                 // status: no capability list
  c[0x08] = 0;                                         // revision
  c[0x09] = static_cast<char>(kClass & 0xff);          // prog-if
  c[0x0a] = static_cast<char>((kClass >> 8) & 0xff);   // sub-class
  c[0x0b] = static_cast<char>((kClass >> 16) & 0xff);  // base class
  c[0x0e] = 0;                                         // header type 0 (endpoint)
  put32(0x10, 0xfe00000c);                             // BAR0: 64-bit prefetchable memory
  put32(0x18, 0xf000000c);                             // BAR2
  put32(0x20, 0x0000000c);                             // BAR4
  put32(0x24, 0x00000080);
  put16(0x2c, kVendor);  // subsystem vendor
  put16(0x2e, spec.pci_device_id);
  return c;
}

std::string Resource(int index) {
  // 13 lines (6 BARs, ROM, 6 IOV) "start end flags", as the kernel prints for an endpoint.
  std::string out;
  const uint64_t base = 0xfe000000ULL + static_cast<uint64_t>(index) * 0x200000ULL;
  auto line = [&out](uint64_t start, uint64_t end, uint64_t flags) {
    absl::StrAppendFormat(&out, "0x%016x 0x%016x 0x%016x\n", start, end, flags);
  };
  line(base, base + 0xfffff, 0x14220c);  // BAR0 1 MiB
  line(0, 0, 0);
  line(base + 0x100000, base + 0x1fffff, 0x14220c);  // BAR2
  line(0, 0, 0);
  const uint64_t bar4 = 0x8000000000ULL + static_cast<uint64_t>(index) * 0x800000000ULL;
  line(bar4, bar4 + 0x7ffffffffULL, 0x14220c);  // BAR4 32 GiB (device memory window)
  for (int i = 5; i < 13; ++i) line(0, 0, 0);
  return out;
}

int NumaOf(const EmulationSpec& spec, int index) {
  if (spec.numa_nodes <= 1 || spec.devices <= 0) return spec.numa_nodes == 1 ? 0 : -1;
  return index * spec.numa_nodes / spec.devices;
}

absl::Status WriteMem(TreeWriter& w, const std::string& dir, uint64_t present) {
  NEURON_RETURN_IF_ERROR(w.File(dir + "/total", absl::StrCat(present * 3, "\n")));
  NEURON_RETURN_IF_ERROR(w.File(dir + "/present", absl::StrCat(present, "\n")));
  return w.File(dir + "/peak", absl::StrCat(present * 2, "\n"));
}

absl::Status WriteCore(TreeWriter& w, const std::string& dev, const Arch& arch, int index,
                       int core) {
  const std::string nc = absl::StrCat(dev, "/neuron_core", core);
  NEURON_RETURN_IF_ERROR(w.File(nc + "/info/architecture/arch_type", absl::StrCat(arch.nc, "\n")));
  const uint64_t seed = static_cast<uint64_t>(index) * 100 + static_cast<uint64_t>(core);
  for (const std::string& c : CoreStatusCounterNames()) {
    const uint64_t total = c == "success" ? 1000 + seed * 7 : 0;
    const std::string d = absl::StrCat(nc, "/stats/status/", c);
    NEURON_RETURN_IF_ERROR(w.File(d + "/total", absl::StrCat(total, "\n")));
    NEURON_RETURN_IF_ERROR(w.File(d + "/present", "0\n"));
  }
  const std::string mem = nc + "/stats/memory_usage";
  NEURON_RETURN_IF_ERROR(WriteMem(w, mem + "/host_mem", 1 << 20));
  NEURON_RETURN_IF_ERROR(WriteMem(w, mem + "/device_mem", 64 << 20));
  uint64_t k = 1;
  for (const std::string& cat : DeviceMemCategories()) {
    NEURON_RETURN_IF_ERROR(WriteMem(w, absl::StrCat(mem, "/device_mem/", cat), (k++) << 16));
  }
  for (const std::string& n : OtherInfoCounterNames()) {
    const uint64_t v = n == "inference_count" ? 500 + seed : 0;
    const std::string d = absl::StrCat(nc, "/stats/other_info/", n);
    NEURON_RETURN_IF_ERROR(w.File(d + "/total", absl::StrCat(v, "\n")));
    NEURON_RETURN_IF_ERROR(w.File(d + "/present", "0\n"));
  }
  return absl::OkStatus();
}

// What the health_status directory of a healthy device holds (driver 2.30.2: counters read
// from firmware registers, "%u\n"). The heartbeat is left still: a reader must not call a
// heartbeat that never moved stopped. unhealthy_components lists nothing.
std::vector<std::pair<std::string, std::string>> HealthStatusFiles() {
  return {{"hbm_ecc_err_count", "0\n"},   {"repairable_hbm_ecc_err_count", "0\n"},
          {"sram_ecc_err_count", "0\n"},  {"hw_error_event", "0\n"},
          {"unhealthy_components", "\n"}, {"healthcheck_heartbeat", "1\n"}};
}

// FNV-1a: a placement that is the same on every build and platform for a given seed.
uint64_t Fnv1a(absl::string_view s, uint64_t h) {
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// Where a scrambled tree puts `leaf`: one of these directories below neuronN/ (none of their
// components is a leaf's name, so nothing collides), chosen by the seed and the leaf's name.
std::string ScrambledPlace(uint64_t seed, const DeviceLeaf& leaf) {
  static constexpr const char* kDirs[] = {
      "",
      "info",
      "stats",
      "info/architecture",
      "stats/device",
      "stats/misc",
      "stats/device/hardware",
      "status/health/nodes",
      "misc",
  };
  const uint64_t h = Fnv1a(leaf.name, seed * 0x9e3779b97f4a7c15ULL + 0xcbf29ce484222325ULL);
  const std::string dir = kDirs[h % (sizeof(kDirs) / sizeof(kDirs[0]))];
  return dir.empty() ? leaf.name : absl::StrCat(dir, "/", leaf.name);
}

}  // namespace

std::string Join(const std::string& root, const std::string& rel) {
  if (root.empty()) return rel;
  if (root.back() == '/') return root + rel;
  return absl::StrCat(root, "/", rel);
}

absl::Status MakeDirs(const std::string& path) {
  std::error_code ec;
  stdfs::create_directories(path, ec);
  if (ec) return FsError(ec, "mkdir", path);
  return absl::OkStatus();
}

absl::Status WriteFileAtomic(const std::string& path, const std::string& contents) {
  NEURON_RETURN_IF_ERROR(MakeDirs(stdfs::path(path).parent_path().string()));
  const std::string tmp = absl::StrCat(path, ".tmp.", ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    if (!out) return absl::UnavailableError(absl::StrCat("write ", tmp, " failed"));
  }
  std::error_code ec;
  stdfs::rename(tmp, path, ec);
  if (ec) return FsError(ec, "rename", path);
  return absl::OkStatus();
}

absl::Status MakeSymlink(const std::string& target, const std::string& link) {
  NEURON_RETURN_IF_ERROR(MakeDirs(stdfs::path(link).parent_path().string()));
  std::error_code ec;
  stdfs::remove_all(link, ec);
  stdfs::create_symlink(target, link, ec);
  if (ec) return FsError(ec, "symlink", link);
  return absl::OkStatus();
}

TreeWriter::~TreeWriter() {
  if (fd_ >= 0) ::close(fd_);
}

// mkdir -p with one mkdir per new directory: no stat of each component (create_directories
// stats every path first, twice per new directory in a fresh tree).
absl::Status TreeWriter::Dir(const std::string& path) {
  if (path.empty() || made_.count(path) != 0) return absl::OkStatus();
  if (::mkdir(path.c_str(), 0755) != 0) {
    int err = errno;
    if (err == ENOENT) {
      const size_t slash = path.rfind('/');
      if (slash != std::string::npos && slash > 0) {
        NEURON_RETURN_IF_ERROR(Dir(path.substr(0, slash)));
        err = ::mkdir(path.c_str(), 0755) == 0 ? 0 : errno;
      }
    }
    if (err != 0 && err != EEXIST) {
      return FsError(std::error_code(err, std::generic_category()), "mkdir", path);
    }
  }
  made_.insert(path);
  return absl::OkStatus();
}

int TreeWriter::DirFd(const std::string& dir) {
  if (fd_ >= 0 && dir == fd_dir_) return fd_;
  if (fd_ >= 0) ::close(fd_);
  fd_ = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  fd_dir_ = fd_ >= 0 ? dir : std::string();
  return fd_;
}

absl::Status TreeWriter::File(const std::string& path, const std::string& contents) {
  const size_t slash = path.rfind('/');
  if (atomic_ || slash == std::string::npos) return WriteFileAtomic(path, contents);
  const std::string dir = path.substr(0, slash);
  NEURON_RETURN_IF_ERROR(Dir(dir));
  // Relative to the last directory's fd: consecutive files mostly share one (total/present).
  const int dfd = DirFd(dir);
  const int fd = dfd >= 0 ? ::openat(dfd, path.c_str() + slash + 1,
                                     O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
                          : ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return FsError(std::error_code(errno, std::generic_category()), "open", path);
  const ssize_t n = contents.empty() ? 0 : ::write(fd, contents.data(), contents.size());
  const int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(contents.size())) {
    return FsError(std::error_code(err, std::generic_category()), "write", path);
  }
  return absl::OkStatus();
}

absl::Status RemoveAll(const std::string& path) {
  std::error_code ec;
  stdfs::remove_all(path, ec);
  if (ec) return FsError(ec, "remove", path);
  return absl::OkStatus();
}

std::string HostBridgeName(int index) { return absl::StrFormat("pci0000:%02x", 0x10 + index / 4); }
std::string PciDeviceRealDir(int index) {
  return absl::StrCat("sys/devices/", HostBridgeName(index), "/", EmulatedPciAddress(index));
}
std::string NeuronVirtualDir(int index) {
  return absl::StrCat(kNeuronVirtualDir, "/neuron", index);
}

absl::Status WritePciFunction(TreeWriter& w, const std::string& root, const EmulationSpec& spec,
                              int index, bool bound) {
  const std::string addr = EmulatedPciAddress(index);
  const std::string dir = Join(root, PciDeviceRealDir(index));
  const std::string id = absl::StrFormat("0x%04x\n", spec.pci_device_id);
  const std::string modalias = absl::StrFormat(
      "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X", kVendor, spec.pci_device_id, kVendor,
      spec.pci_device_id, kClass >> 16, (kClass >> 8) & 0xff, kClass & 0xff);
  const std::pair<const char*, std::string> files[] = {
      {"vendor", absl::StrFormat("0x%04x\n", kVendor)},
      {"device", id},
      {"subsystem_vendor", absl::StrFormat("0x%04x\n", kVendor)},
      {"subsystem_device", id},
      {"class", absl::StrFormat("0x%06x\n", kClass)},
      {"revision", "0x00\n"},
      {"numa_node", absl::StrCat(NumaOf(spec, index), "\n")},
      {"irq", "0\n"},
      {"enable", "1\n"},
      {"local_cpulist", "0-63\n"},
      {"modalias", modalias + "\n"},
      {"resource", Resource(index)},
      {"config", Config(spec)},
      {"uevent", absl::StrFormat("%sPCI_CLASS=%X\nPCI_ID=1D0F:%04X\nPCI_SUBSYS_ID=1D0F:%04X\n"
                                 "PCI_SLOT_NAME=%s\nMODALIAS=%s\n",
                                 bound ? "DRIVER=neuron-driver\n" : "", kClass, spec.pci_device_id,
                                 spec.pci_device_id, addr, modalias)},
  };
  for (const auto& [name, contents] : files) {
    NEURON_RETURN_IF_ERROR(w.File(absl::StrCat(dir, "/", name), contents));
  }
  NEURON_RETURN_IF_ERROR(
      MakeSymlink(absl::StrCat("../../../devices/", HostBridgeName(index), "/", addr),
                  Join(root, absl::StrCat("sys/bus/pci/devices/", addr))));
  NEURON_RETURN_IF_ERROR(MakeSymlink("../../../bus/pci", dir + "/subsystem"));
  const std::string drv_link =
      Join(root, absl::StrCat("sys/bus/pci/drivers/", kNeuronPciDriver, "/", addr));
  if (bound) {
    NEURON_RETURN_IF_ERROR(
        MakeSymlink(absl::StrCat("../../../bus/pci/drivers/", kNeuronPciDriver), dir + "/driver"));
    NEURON_RETURN_IF_ERROR(MakeSymlink(
        absl::StrCat("../../../../devices/", HostBridgeName(index), "/", addr), drv_link));
  } else {
    NEURON_RETURN_IF_ERROR(RemoveAll(dir + "/driver"));
    NEURON_RETURN_IF_ERROR(RemoveAll(drv_link));
  }
  return absl::OkStatus();
}

absl::Status WriteNeuronDevice(TreeWriter& w, const std::string& root, const EmulationSpec& spec,
                               int index) {
  const Arch arch = ArchFor(spec.pci_device_id);
  const std::string dev = Join(root, NeuronVirtualDir(index));
  std::vector<std::string> links;
  if (index < static_cast<int>(spec.links.size())) {
    for (int l : spec.links[static_cast<size_t>(index)]) links.push_back(absl::StrCat(l));
  }
  // Device-level files by their driver 2.30.2 place; EmulatedLeafPath moves the leaves.
  std::vector<std::pair<std::string, std::string>> files = {
      {"core_count", absl::StrCat(spec.cores_per_device)},  // no newline
      {"connected_devices", absl::StrCat(absl::StrJoin(links, ", "), "\n")},
      {"reset", "0\n"},
      {"dev", absl::StrCat(kNeuronMajor, ":", index, "\n")},
      {"uevent",
       absl::StrCat("MAJOR=", kNeuronMajor, "\nMINOR=", index, "\nDEVNAME=neuron", index, "\n")},
      {"info/notify_delay", "-1\n"},
      {"info/architecture/arch_type", absl::StrCat(arch.nd, "\n")},
      {"info/architecture/instance_type", absl::StrCat(arch.instance, "\n")},
      {"info/architecture/device_name", absl::StrCat(arch.device_name, "\n")},
      {"stats/power/utilization",
       absl::StrFormat("POWER_STATUS_VALID,%d,10.00,%d.50,%d.25\n", 1700000000 + index,
                       40 + index % 10, 20 + index % 10)},
  };
  if (arch.has_serial) {
    files.emplace_back("info/serial_number",
                       absl::StrFormat("%016x\n", 0x5e5a000000000000ULL + index));
  }
  for (const std::string& c : HardwareCounterNames()) {
    files.emplace_back(absl::StrCat("stats/hardware/", c), "0\n");
  }
  for (const auto& [name, contents] : HealthStatusFiles()) {
    files.emplace_back(absl::StrCat("stats/hardware/health_status/", name), contents);
  }
  uint64_t k = 1;
  for (const std::string& cat : HostMemCategories()) {
    const std::string dir = absl::StrCat("stats/memory_usage/host_mem/", cat);
    const uint64_t present = (k++) << 12;
    files.emplace_back(dir + "/total", absl::StrCat(present * 3, "\n"));
    files.emplace_back(dir + "/present", absl::StrCat(present, "\n"));
    files.emplace_back(dir + "/peak", absl::StrCat(present * 2, "\n"));
  }
  for (const auto& [rel, contents] : files) {
    NEURON_RETURN_IF_ERROR(
        w.File(absl::StrCat(dev, "/", EmulatedLeafPath(spec.scramble_seed, rel)), contents));
  }
  for (int core = 0; core < spec.cores_per_device; ++core) {
    NEURON_RETURN_IF_ERROR(WriteCore(w, dev, arch, index, core));
  }
  NEURON_RETURN_IF_ERROR(MakeSymlink("../../../../class/neuron_device", dev + "/subsystem"));
  NEURON_RETURN_IF_ERROR(
      MakeSymlink(absl::StrCat("../../devices/virtual/neuron_device/neuron", index),
                  Join(root, NeuronDeviceDir(index))));
  return w.File(Join(root, NeuronDevNode(index)), "");
}

uint64_t RecordedScrambleSeed(const std::string& root) {
  std::ifstream in(Join(root, kMarker));
  std::string line;
  uint64_t seed = 0;
  while (std::getline(in, line)) {
    if (line.rfind("scramble=", 0) == 0 && absl::SimpleAtoi(line.substr(9), &seed)) return seed;
  }
  return 0;
}

absl::Status RemoveNeuronDevice(const std::string& root, int index) {
  NEURON_RETURN_IF_ERROR(RemoveAll(Join(root, NeuronDeviceDir(index))));
  NEURON_RETURN_IF_ERROR(RemoveAll(Join(root, NeuronDevNode(index))));
  return RemoveAll(Join(root, NeuronVirtualDir(index)));
}

}  // namespace emulator_internal

std::string EmulatedPciAddress(int index) {
  return absl::StrFormat("0000:%02x:%02x.0", 0x10 + index / 4, 0x1b + index % 4);
}

std::string EmulatedLeafPath(uint64_t scramble_seed, const std::string& known_rel) {
  if (scramble_seed == 0) return known_rel;
  for (const DeviceLeaf& leaf : DeviceLeaves()) {
    const absl::string_view known = leaf.known;
    if (known_rel == known) return emulator_internal::ScrambledPlace(scramble_seed, leaf);
    if (leaf.is_dir && absl::StartsWith(known_rel, absl::StrCat(known, "/"))) {
      return absl::StrCat(emulator_internal::ScrambledPlace(scramble_seed, leaf),
                          known_rel.substr(known.size()));
    }
  }
  return known_rel;
}

absl::StatusOr<std::vector<std::string>> WriteEmulatedTree(const std::string& root,
                                                           const EmulationSpec& spec) {
  namespace ei = emulator_internal;
  if (root.empty() || std::filesystem::path(root).lexically_normal() == "/") {
    return absl::InvalidArgumentError("refusing to write an emulated tree over /");
  }
  if (spec.devices < 0 || spec.devices > 960) {
    return absl::InvalidArgumentError(absl::StrCat("bad device count ", spec.devices));
  }
  if (spec.cores_per_device < 1 || spec.cores_per_device > 64) {
    return absl::InvalidArgumentError(absl::StrCat("bad cores_per_device ", spec.cores_per_device));
  }
  if (!spec.links.empty() && static_cast<int>(spec.links.size()) != spec.devices) {
    return absl::InvalidArgumentError("links.size() must equal devices");
  }
  for (const auto& l : spec.links) {
    for (int d : l) {
      if (d < 0 || d >= spec.devices) return absl::InvalidArgumentError("link index out of range");
    }
  }
  // Replace a previous emulated tree; never delete a directory we did not write.
  const std::string marker = ei::Join(root, ei::kMarker);
  std::error_code ec;
  if (std::filesystem::exists(ei::Join(root, "sys"), ec) && !std::filesystem::exists(marker, ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat(root, " has a sys/ that is not an emulated tree; refusing to replace it"));
  }
  NEURON_RETURN_IF_ERROR(ei::RemoveAll(ei::Join(root, "sys")));
  NEURON_RETURN_IF_ERROR(ei::RemoveAll(ei::Join(root, "dev")));
  NEURON_RETURN_IF_ERROR(ei::WriteFileAtomic(
      marker, absl::StrCat(spec.instance_type, "\nscramble=", spec.scramble_seed, "\n")));
  // The runtime's LNC, where EKS node user data writes it (aws-neuron-sdk
  // deploy/eks/prerequisites.rst). Written only when asked, so the default path is exercised too.
  const std::string lnc_file = ei::Join(root, "opt/aws/neuron/logical_nc_config");
  NEURON_RETURN_IF_ERROR(ei::RemoveAll(lnc_file));
  if (spec.lnc > 0) {
    NEURON_RETURN_IF_ERROR(
        ei::WriteFileAtomic(lnc_file, absl::StrCat("NEURON_LOGICAL_NC_CONFIG=", spec.lnc, "\n")));
  }
  // Driver directory and the files the PCI core gives every driver.
  const std::string drv = ei::Join(root, absl::StrCat("sys/bus/pci/drivers/", kNeuronPciDriver));
  for (const char* f : {"bind", "unbind", "new_id", "remove_id", "uevent"}) {
    NEURON_RETURN_IF_ERROR(ei::WriteFileAtomic(absl::StrCat(drv, "/", f), ""));
  }
  NEURON_RETURN_IF_ERROR(ei::MakeDirs(ei::Join(root, "sys/bus/pci/devices")));
  NEURON_RETURN_IF_ERROR(ei::MakeDirs(ei::Join(root, kNeuronClassDir)));
  // Class attributes: what the spec says (an UltraServer node), else what the driver prints on a
  // node outside any UltraServer.
  std::map<std::string, std::string> class_attrs = spec.class_attributes;
  if (class_attrs.empty()) {
    class_attrs = {{"ultraserver_mode", "\n"},
                   {"server_id_2", "0000000000000000\n"},
                   {"server_id_4", "0000000000000000\n"},
                   {"node_id_2", "-1\n"},
                   {"node_id_4", "-1\n"}};
  }
  for (const auto& [name, body] : class_attrs) {
    NEURON_RETURN_IF_ERROR(ei::WriteFileAtomic(ei::Join(root, kNeuronClassDir) + "/" + name, body));
  }
  NEURON_RETURN_IF_ERROR(
      ei::WriteFileAtomic(ei::Join(root, "sys/devices/virtual/dmi/id/sys_vendor"), "Amazon EC2\n"));
  NEURON_RETURN_IF_ERROR(ei::WriteFileAtomic(
      ei::Join(root, "sys/devices/virtual/dmi/id/product_name"), spec.instance_type + "\n"));
  NEURON_RETURN_IF_ERROR(
      ei::MakeSymlink("../../devices/virtual/dmi/id", ei::Join(root, "sys/class/dmi/id")));
  // The driver release whose layout this is; a scrambled tree stands for 2.31+, whose layout
  // we do not know (NEURON.md §5).
  NEURON_RETURN_IF_ERROR(ei::WriteFileAtomic(
      ei::Join(root, kNeuronModuleVersion), spec.scramble_seed == 0 ? "2.30.2.0\n" : "2.31.7.0\n"));
  std::vector<std::string> addrs;
  ei::TreeWriter w(/*atomic=*/false);
  for (int i = 0; i < spec.devices; ++i) {
    NEURON_RETURN_IF_ERROR(ei::WritePciFunction(w, root, spec, i, /*bound=*/true));
    NEURON_RETURN_IF_ERROR(ei::WriteNeuronDevice(w, root, spec, i));
    addrs.push_back(EmulatedPciAddress(i));
  }
  return addrs;
}

}  // namespace neuron::sysfs
