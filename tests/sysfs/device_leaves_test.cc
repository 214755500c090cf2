#include "lib/sysfs/device_leaves.h"

#include <filesystem>
#include <set>

#include "catch2/catch.hpp"
#include "lib/sysfs/emulator.h"
#include "lib/sysfs/neuron_driver.h"
#include "lib/sysfs/parsers.h"
#include "tests/sysfs/temp_dir.h"

namespace neuron::sysfs {
namespace {

using testing::TempDir;
namespace stdfs = std::filesystem;

EmulationSpec Trn2x2(uint64_t scramble_seed = 0) {
  EmulationSpec s;
  s.instance_type = "custom";
  s.pci_device_id = 0x7364;
  s.devices = 2;
  s.cores_per_device = 8;  // physical, as the driver prints
  s.links = {{1}, {0}};
  s.scramble_seed = scramble_seed;
  return s;
}

std::string DevDir(const TempDir& dir, int index) {
  return dir.path() + "/sys/devices/virtual/neuron_device/neuron" + std::to_string(index);
}

TEST_CASE("every leaf has a distinct name and a place below the device", "[sysfs][leaves]") {
  std::set<std::string> names;
  for (const DeviceLeaf& l : DeviceLeaves()) {
    CAPTURE(l.name);
    CHECK(names.insert(l.name).second);
    CHECK(stdfs::path(l.known).filename() == l.name);
    CHECK(FindDeviceLeaf(l.name) == &l);
  }
  for (const std::string& c : HardwareCounterNames()) CHECK(names.count(c) == 1);
  CHECK(FindDeviceLeaf("success") == nullptr);  // per-core counters are not device leaves
  CHECK(FindDeviceLeaf("") == nullptr);
}

TEST_CASE("leaves are found at driver 2.30.2's places without a walk", "[sysfs][leaves]") {
  TempDir dir;
  REQUIRE(WriteEmulatedTree(dir.path(), Trn2x2()).ok());
  auto fs = MakeRootedFs(dir.path());
  DeviceLeafLocator leaves(*fs);
  for (const DeviceLeaf& l : DeviceLeaves()) {
    CAPTURE(l.name);
    const std::optional<std::string> p = leaves.Find(1, l.name);
    REQUIRE(p.has_value());
    CHECK(*p == NeuronDeviceDir(1) + "/" + l.known);
  }
  CHECK(*ParseCoreCount(*fs->ReadFile(*leaves.Find(0, leaf::kCoreCount))) == 8);
  CHECK(leaves.Places(1).size() == DeviceLeaves().size());
  CHECK(leaves.Places(1).at(leaf::kHostMem) == "stats/memory_usage/host_mem");
  CHECK_FALSE(leaves.Find(7, leaf::kCoreCount).has_value());  // no such device
  CHECK_FALSE(leaves.Find(0, "reset").has_value());           // not a leaf of ours
}

TEST_CASE("a moved leaf is found by name, and found again after it moves", "[sysfs][leaves]") {
  TempDir dir;
  REQUIRE(WriteEmulatedTree(dir.path(), Trn2x2()).ok());
  auto fs = MakeRootedFs(dir.path());
  const std::string dev = DevDir(dir, 0);
  stdfs::create_directories(dev + "/info/hw");
  stdfs::rename(dev + "/core_count", dev + "/info/hw/core_count");
  DeviceLeafLocator leaves(*fs);
  CHECK(*leaves.Find(0, leaf::kCoreCount) == NeuronDeviceDir(0) + "/info/hw/core_count");
  CHECK(leaves.Places(0).at(leaf::kCoreCount) == "info/hw/core_count");

  // Moved again: the remembered place fails; after Forget the next Find walks again.
  stdfs::create_directories(dev + "/stats/device");
  stdfs::rename(dev + "/info/hw/core_count", dev + "/stats/device/core_count");
  CHECK_FALSE(fs->ReadFile(*leaves.Find(0, leaf::kCoreCount)).ok());
  leaves.Forget(0, leaf::kCoreCount);
  CHECK(*leaves.Find(0, leaf::kCoreCount) == NeuronDeviceDir(0) + "/stats/device/core_count");

  // Gone for good: nothing to find (and no error either: the caller decides).
  stdfs::remove(dev + "/stats/device/core_count");
  leaves.Forget(0, leaf::kCoreCount);
  CHECK_FALSE(leaves.Find(0, leaf::kCoreCount).has_value());
}

TEST_CASE("the walk skips per-core dirs and symlinks, and is bounded in depth", "[sysfs][leaves]") {
  TempDir dir;
  REQUIRE(WriteEmulatedTree(dir.path(), Trn2x2()).ok());
  auto fs = MakeRootedFs(dir.path());
  const std::string dev = DevDir(dir, 0);
  // A per-core file of the same name must never stand in for the device's.
  stdfs::remove(dev + "/info/architecture/arch_type");
  REQUIRE(stdfs::exists(dev + "/neuron_core0/info/architecture/arch_type"));
  // Too deep to be found: depth 6 below neuronN/.
  stdfs::create_directories(dev + "/a/b/c/d/e");
  stdfs::rename(dev + "/connected_devices", dev + "/a/b/c/d/e/connected_devices");
  // Reachable only through a symlink (the class link leads back to every device).
  stdfs::create_directories(dir.path() + "/elsewhere");
  stdfs::rename(dev + "/info/notify_delay", dir.path() + "/elsewhere/notify_delay");
  stdfs::create_directory_symlink(dir.path() + "/elsewhere", dev + "/link");
  DeviceLeafLocator leaves(*fs);
  CHECK_FALSE(leaves.Find(0, leaf::kArchType).has_value());
  CHECK_FALSE(leaves.Find(0, leaf::kConnectedDevices).has_value());
  CHECK_FALSE(leaves.Find(0, leaf::kNotifyDelay).has_value());
  CHECK(leaves.Find(0, leaf::kCoreCount).has_value());  // the others are still there
  CHECK(leaves.Find(1, leaf::kArchType).has_value());   // and device 1 is untouched
}

TEST_CASE("a scrambled tree moves every leaf, and SetCounter follows it", "[sysfs][leaves]") {
  TempDir dir;
  REQUIRE(WriteEmulatedTree(dir.path(), Trn2x2(/*scramble_seed=*/11)).ok());
  auto fs = MakeRootedFs(dir.path());
  int moved = 0;
  for (const DeviceLeaf& l : DeviceLeaves()) {
    CAPTURE(l.name);
    const std::string placed = EmulatedLeafPath(11, l.known);
    CHECK(stdfs::path(placed).filename() == l.name);
    CHECK(fs->Exists(NeuronDeviceDir(0) + "/" + placed));
    if (placed != l.known) {
      ++moved;
      CHECK_FALSE(fs->Exists(NeuronDeviceDir(0) + "/" + l.known));
    }
  }
  CHECK(moved >= static_cast<int>(DeviceLeaves().size()) / 2);
  CHECK(EmulatedLeafPath(11, "neuron_core0/stats/status/failure/total") ==
        "neuron_core0/stats/status/failure/total");  // per-core paths never move
  CHECK(EmulatedLeafPath(0, "stats/hardware/mem_ecc_uncorrected") ==
        "stats/hardware/mem_ecc_uncorrected");
  CHECK(*fs->ReadFile(kNeuronModuleVersion) == "2.31.7.0\n");

  REQUIRE(emulation::SetCounter(dir.path(), 1, "stats/hardware/mem_ecc_uncorrected", 5).ok());
  DeviceLeafLocator leaves(*fs);
  const std::optional<std::string> p = leaves.Find(1, "mem_ecc_uncorrected");
  REQUIRE(p.has_value());
  CHECK(*ParseU64(*fs->ReadFile(*p)) == 5);
  // A host_mem category below the moved directory.
  const std::string cat = EmulatedLeafPath(11, "stats/memory_usage/host_mem/tensors/present");
  CHECK(cat == EmulatedLeafPath(11, "stats/memory_usage/host_mem") + "/tensors/present");
  CHECK(fs->Exists(NeuronDeviceDir(1) + "/" + cat));
}

TEST_CASE("the unscrambled tree is driver 2.30.2's, health status included", "[sysfs][leaves]") {
  TempDir dir;
  REQUIRE(WriteEmulatedTree(dir.path(), Trn2x2()).ok());
  auto fs = MakeRootedFs(dir.path());
  CHECK(*fs->ReadFile(kNeuronModuleVersion) == "2.30.2.0\n");
  const std::string dev = NeuronDeviceDir(0);
  for (const char* f :
       {"core_count", "connected_devices", "stats/hardware/mem_ecc_corrected",
        "stats/hardware/sram_ecc_corrected", "stats/hardware/health_status/hw_error_event",
        "stats/hardware/health_status/unhealthy_components",
        "stats/hardware/health_status/healthcheck_heartbeat"}) {
    CAPTURE(f);
    CHECK(fs->Exists(dev + "/" + f));
  }
  CHECK(*ParseUnhealthyComponents(
            *fs->ReadFile(dev + "/" + "stats/hardware/health_status/unhealthy_components")) == "");
}

}  // namespace
}  // namespace neuron::sysfs
