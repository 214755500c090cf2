// File: lib/inventory/emulation.cc
#include "lib/inventory/emulation.h"

#include <stdlib.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "spdlog/spdlog.h"

namespace neuron::inventory {

absl::StatusOr<sysfs::EmulationSpec> BuildEmulationSpec(
    const topology::Shape& shape, int lnc, uint64_t scramble_seed,
    const std::optional<ultraserver::EmulatedNode>& ultraserver) {
  if (ultraserver && shape.instance_type != kUltraServerShape) {
    return absl::InvalidArgumentError(absl::StrCat("an UltraServer node can only be emulated as ",
                                                   kUltraServerShape, ", not ",
                                                   shape.instance_type));
  }
  // Validates lnc against the family; the logical count it computes is the runtime's business.
  NEURON_ASSIGN_OR_RETURN(const topology::NodeTopology topo,
                          topology::TopologyForShape(shape, lnc));
  (void)topo;
  const std::optional<topology::DeviceModel> model =
      topology::ModelForPciDevice(shape.pci_device_id);
  if (!model) return absl::InvalidArgumentError("shape with an unknown PCI device id");
  sysfs::EmulationSpec spec;
  spec.instance_type = shape.instance_type;
  spec.pci_device_id = shape.pci_device_id;
  spec.devices = shape.devices;
  spec.cores_per_device = model->physical_cores;
  spec.scramble_seed = scramble_seed;
  spec.lnc = lnc;
  spec.links = shape.links;
  spec.numa_nodes = std::max(1, shape.numa_nodes);
  if (ultraserver) spec.class_attributes = ultraserver::EmulatedClassAttributes(*ultraserver);
  return spec;
}

absl::StatusOr<std::optional<ultraserver::EmulatedNode>> ParseEmulateUltraServerFlag(
    const std::string& emulate, const std::string& flag) {
  if (flag.empty()) return std::optional<ultraserver::EmulatedNode>();
  NEURON_ASSIGN_OR_RETURN(ultraserver::EmulatedNode node, ultraserver::ParseEmulatedNode(flag));
  if (emulate != kUltraServerShape) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--emulate-ultraserver needs --emulate=", kUltraServerShape, " (the UltraServer node type)",
        emulate.empty() ? std::string(", and --emulate is not set")
                        : absl::StrCat(", not --emulate=", emulate)));
  }
  return std::optional<ultraserver::EmulatedNode>(std::move(node));
}

namespace {

constexpr long kTmpfsMagic = 0x01021994;  // TMPFS_MAGIC (linux/magic.h)

// `dir` is a writable tmpfs with room for `need` bytes.
bool RoomyTmpfs(const std::string& dir, uint64_t need) {
  struct statfs s {};
  if (::statfs(dir.c_str(), &s) != 0 || static_cast<long>(s.f_type) != kTmpfsMagic) return false;
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return false;
  return static_cast<uint64_t>(s.f_bavail) * static_cast<uint64_t>(s.f_bsize) >= need;
}

}  // namespace

std::string EmulationTempParent(uint64_t need) {
  const char* env = std::getenv("TMPDIR");
  std::string tmpdir = env != nullptr && *env != '\0' ? env : "/tmp";
  // A tree of ~14k files writes in ~0.3 s on tmpfs and in seconds on a disk-backed /tmp.
  for (const std::string& d : {std::string("/dev/shm"), tmpdir, std::string("/tmp")}) {
    if (RoomyTmpfs(d, need)) return d;
  }
  return tmpdir;
}

absl::StatusOr<std::string> MakeEmulationTempDir(uint64_t need) {
  const std::string parent = EmulationTempParent(need);
  std::string tmpl = absl::StrCat(parent, "/neuron-emulated-XXXXXX");
  if (::mkdtemp(tmpl.data()) == nullptr) {
    return absl::UnavailableError(absl::StrCat("mkdtemp ", tmpl, " failed"));
  }
  spdlog::info("emulated tree directory dir={} tmpfs={} estimated_bytes={}", tmpl,
               RoomyTmpfs(parent, 0), need);
  return tmpl;
}

absl::StatusOr<std::string> PrepareEmulation(
    const std::string& instance_type, const std::string& dir, int lnc, uint64_t scramble_seed,
    const std::optional<ultraserver::EmulatedNode>& ultraserver) {
  const topology::Shape* shape = topology::FindShape(instance_type);
  if (shape == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("unknown instance type for emulation: ", instance_type));
  }
  NEURON_ASSIGN_OR_RETURN(const sysfs::EmulationSpec spec,
                          BuildEmulationSpec(*shape, lnc, scramble_seed, ultraserver));
  std::string root = dir;
  if (root.empty()) {
    const uint64_t need = sysfs::EmulatedTreeBytes(spec.devices, spec.cores_per_device,
                                                   static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)));
    NEURON_ASSIGN_OR_RETURN(root, MakeEmulationTempDir(need));
  }
  std::error_code ec;
  root = std::filesystem::absolute(root, ec).lexically_normal().string();
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  NEURON_ASSIGN_OR_RETURN(const std::vector<std::string> addrs,
                          sysfs::WriteEmulatedTree(root, spec));
  spdlog::info(
      "emulated host written instance_type={} devices={} physical_cores_per_device={} "
      "sysfs_layout={} lnc_file={} ultraserver={} root={}",
      instance_type, addrs.size(), spec.cores_per_device,
      scramble_seed == 0 ? std::string("driver-2.30.2") : absl::StrCat("scrambled:", scramble_seed),
      lnc > 0 ? std::to_string(lnc) : "none",
      ultraserver ? absl::StrCat(ultraserver->name, ":", ultraserver->node) : "none", root);
  return root;
}

}  // namespace neuron::inventory
