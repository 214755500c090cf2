#include "lib/sysfs/emulator.h"

#include <filesystem>

#include "catch2/catch.hpp"
#include "lib/sysfs/neuron_driver.h"
#include "lib/sysfs/parsers.h"
#include "lib/sysfs/pci.h"
#include "tests/sysfs/temp_dir.h"

namespace neuron::sysfs {
namespace {

using testing::TempDir;

EmulationSpec Ring4() {
  EmulationSpec s;
  s.instance_type = "inf1.6xlarge";
  s.pci_device_id = 0x7064;
  s.devices = 4;
  s.cores_per_device = 4;
  s.links = {{1, 3}, {0, 2}, {1, 3}, {2, 0}};
  s.numa_nodes = 1;
  return s;
}

TEST_CASE("emulated tree has the kernel's layout and symlinks", "[sysfs][emulator]") {
  TempDir dir;
  auto addrs = WriteEmulatedTree(dir.path(), Ring4());
  REQUIRE(addrs.ok());
  CHECK(*addrs ==
        std::vector<std::string>{"0000:10:1b.0", "0000:10:1c.0", "0000:10:1d.0", "0000:10:1e.0"});
  auto fs = MakeRootedFs(dir.path());
  const std::string bus = "sys/bus/pci/devices/0000:10:1c.0";
  CHECK(*fs->ReadLink(bus) == "../../../devices/pci0000:10/0000:10:1c.0");
  CHECK(*fs->ReadLink(bus + "/driver") == "../../../bus/pci/drivers/neuron-driver");
  CHECK(fs->Exists("sys/bus/pci/drivers/neuron-driver/0000:10:1c.0/vendor"));  // link back
  CHECK(*fs->ReadFile(bus + "/vendor") == "0x1d0f\n");
  CHECK(*fs->ReadFile(bus + "/device") == "0x7064\n");
  CHECK(*fs->ReadLink("sys/class/neuron_device/neuron2") ==
        "../../devices/virtual/neuron_device/neuron2");
  // No `device` link from the class device: the driver passes no parent.
  CHECK_FALSE(fs->Exists("sys/class/neuron_device/neuron2/device"));
  CHECK(fs->Exists("dev/neuron3"));
  CHECK(*fs->ReadFile("sys/devices/virtual/dmi/id/product_name") == "inf1.6xlarge\n");
  CHECK(*fs->ReadFile("sys/class/dmi/id/sys_vendor") == "Amazon EC2\n");
}

TEST_CASE("emulated driver attributes parse with the driver's formats", "[sysfs][emulator]") {
  TempDir dir;
  REQUIRE(WriteEmulatedTree(dir.path(), Ring4()).ok());
  auto fs = MakeRootedFs(dir.path());
  auto indices = ListNeuronDeviceIndices(*fs);
  REQUIRE(indices.ok());
  CHECK(*indices == std::vector<int>{0, 1, 2, 3});
  const std::string d3 = NeuronDeviceDir(3);
  CHECK(*fs->ReadFile(d3 + "/core_count") == "4");  // no newline
  CHECK(*ParseConnectedDevices(*fs->ReadFile(d3 + "/connected_devices")) == std::vector<int>{2, 0});
  CHECK(*ParseToken(*fs->ReadFile(d3 + "/info/architecture/arch_type")) == "NDv1");
  CHECK(ParsePowerUtilization(*fs->ReadFile(d3 + "/stats/power/utilization"))->valid);
  for (const std::string& c : HardwareCounterNames()) {
    CHECK(*ParseU64(*fs->ReadFile(d3 + "/stats/hardware/" + c)) == 0);
  }
  for (const std::string& c : HostMemCategories()) {
    CHECK(ParseU64(*fs->ReadFile(d3 + "/stats/memory_usage/host_mem/" + c + "/present")).ok());
  }
  auto cores = ListNeuronCoreIndices(*fs, 3);
  REQUIRE(cores.ok());
  CHECK(*cores == std::vector<int>{0, 1, 2, 3});
  const std::string nc = NeuronCoreDir(3, 1);
  CHECK(*ParseToken(*fs->ReadFile(nc + "/info/architecture/arch_type")) == "NCv1");
  for (const std::string& c : CoreStatusCounterNames()) {
    CHECK(ParseU64(*fs->ReadFile(nc + "/stats/status/" + c + "/total")).ok());
    CHECK(ParseU64(*fs->ReadFile(nc + "/stats/status/" + c + "/present")).ok());
  }
  for (const std::string& c : DeviceMemCategories()) {
    for (const char* f : {"/total", "/present", "/peak"}) {
      CHECK(ParseU64(*fs->ReadFile(nc + "/stats/memory_usage/device_mem/" + c + f)).ok());
    }
  }
  for (const std::string& c : OtherInfoCounterNames()) {
    CHECK(ParseU64(*fs->ReadFile(nc + "/stats/other_info/" + c + "/total")).ok());
  }
  CHECK(ParseConnectedDevices(*fs->ReadFile(d3 + "/connected_devices")).ok());
}

TEST_CASE("single-device shapes print an empty connected_devices line", "[sysfs][emulator]") {
  TempDir dir;
  EmulationSpec s = Ring4();
  s.devices = 1;
  s.links = {{}};
  REQUIRE(WriteEmulatedTree(dir.path(), s).ok());
  auto fs = MakeRootedFs(dir.path());
  CHECK(*fs->ReadFile(NeuronDeviceDir(0) + "/connected_devices") == "\n");
}

TEST_CASE("WriteEmulatedTree validates and protects", "[sysfs][emulator]") {
  TempDir dir;
  EmulationSpec bad = Ring4();
  bad.links = {{1}};
  CHECK(absl::IsInvalidArgument(WriteEmulatedTree(dir.path(), bad).status()));
  bad = Ring4();
  bad.links[0] = {9};
  CHECK(absl::IsInvalidArgument(WriteEmulatedTree(dir.path(), bad).status()));
  CHECK(absl::IsInvalidArgument(WriteEmulatedTree("/", Ring4()).status()));
  // A directory with a foreign sys/ is never wiped.
  dir.Write("sys/precious", "x");
  CHECK(absl::IsFailedPrecondition(WriteEmulatedTree(dir.path(), Ring4()).status()));
  CHECK(std::filesystem::exists(dir.path() + "/sys/precious"));
}

TEST_CASE("rewriting replaces an earlier emulated tree", "[sysfs][emulator]") {
  TempDir dir;
  REQUIRE(WriteEmulatedTree(dir.path(), Ring4()).ok());
  EmulationSpec two = Ring4();
  two.devices = 2;
  two.links = {{1}, {0}};
  REQUIRE(WriteEmulatedTree(dir.path(), two).ok());
  auto fs = MakeRootedFs(dir.path());
  CHECK(*ListNeuronDeviceIndices(*fs) == std::vector<int>{0, 1});
  CHECK(ListNeuronPciDevices(*fs)->size() == 2);
}

TEST_CASE("fault helpers edit the tree like the kernel would", "[sysfs][emulator]") {
  TempDir dir;
  const EmulationSpec spec = Ring4();
  REQUIRE(WriteEmulatedTree(dir.path(), spec).ok());
  auto fs = MakeRootedFs(dir.path());

  REQUIRE(emulation::SetCounter(dir.path(), 2, "stats/hardware/mem_ecc_uncorrected", 7).ok());
  CHECK(*fs->ReadFile(NeuronDeviceDir(2) + "/stats/hardware/mem_ecc_uncorrected") == "7\n");
  CHECK(absl::IsNotFound(emulation::SetCounter(dir.path(), 9, "stats/hardware/x", 1)));
  CHECK(absl::IsNotFound(emulation::SetCounter(dir.path(), 2, "nope/dir/x", 1)));
  CHECK(absl::IsInvalidArgument(emulation::SetCounter(dir.path(), 2, "../../../../x", 1)));

  REQUIRE(emulation::WriteAttribute(dir.path(), 1, "core_count", "garbage").ok());
  CHECK(*fs->ReadFile(NeuronDeviceDir(1) + "/core_count") == "garbage");
  REQUIRE(emulation::RemoveAttribute(dir.path(), 1, "core_count").ok());
  CHECK_FALSE(fs->Exists(NeuronDeviceDir(1) + "/core_count"));

  REQUIRE(emulation::UnbindDriver(dir.path(), 0).ok());
  CHECK_FALSE(fs->Exists(NeuronDeviceDir(0)));
  CHECK_FALSE(fs->Exists("dev/neuron0"));
  CHECK(fs->Exists("sys/bus/pci/devices/" + EmulatedPciAddress(0) + "/vendor"));
  CHECK_FALSE(fs->Exists("sys/bus/pci/devices/" + EmulatedPciAddress(0) + "/driver"));

  REQUIRE(emulation::RemoveDevice(dir.path(), 3).ok());
  CHECK_FALSE(fs->Exists(NeuronDeviceDir(3)));
  CHECK_FALSE(fs->Exists("sys/bus/pci/devices/" + EmulatedPciAddress(3)));
  CHECK(*ListNeuronDeviceIndices(*fs) == std::vector<int>{1, 2});
  auto pci = ListNeuronPciDevices(*fs);
  REQUIRE(pci.ok());  // libpci still happy after the faults
  CHECK(pci->size() == 3);

  REQUIRE(emulation::RestoreDevice(dir.path(), spec, 0).ok());
  REQUIRE(emulation::RestoreDevice(dir.path(), spec, 3).ok());
  CHECK(*ListNeuronDeviceIndices(*fs) == std::vector<int>{0, 1, 2, 3});
  CHECK(ListNeuronPciDevices(*fs)->size() == 4);
}

TEST_CASE("MapDevicesToPci pairs by rank among bound functions", "[sysfs][driver]") {
  TempDir dir;
  REQUIRE(WriteEmulatedTree(dir.path(), Ring4()).ok());
  auto fs = MakeRootedFs(dir.path());
  REQUIRE(emulation::UnbindDriver(dir.path(), 1).ok());
  auto pci = ListNeuronPciDevices(*fs);
  REQUIRE(pci.ok());
  auto map = MapDevicesToPci(*fs, *ListNeuronDeviceIndices(*fs), *pci);
  CHECK(map == std::map<int, std::string>{{0, EmulatedPciAddress(0)},
                                          {2, EmulatedPciAddress(2)},
                                          {3, EmulatedPciAddress(3)}});
  // An explicit device link wins over rank order.
  dir.Symlink("../../../" + EmulatedPciAddress(3),
              "sys/devices/virtual/neuron_device/neuron0/device");
  map = MapDevicesToPci(*fs, {0, 2, 3}, *pci);
  CHECK(map.at(0) == EmulatedPciAddress(3));
  CHECK(map.at(2) == EmulatedPciAddress(0));
  CHECK(map.at(3) == EmulatedPciAddress(2));
}

TEST_CASE("device index listing ignores class attributes and odd names", "[sysfs][driver]") {
  TempDir dir;
  dir.Write("sys/class/neuron_device/node_id_2", "0\n");
  dir.Write("sys/class/neuron_device/ultraserver_mode", "0\n");
  dir.Write("sys/class/neuron_device/neuron10/core_count", "2");
  dir.Write("sys/class/neuron_device/neuron2/core_count", "2");
  dir.Write("sys/class/neuron_device/neuron02/core_count", "2");
  dir.Write("sys/class/neuron_device/neuronx/core_count", "2");
  auto fs = MakeRootedFs(dir.path());
  CHECK(*ListNeuronDeviceIndices(*fs) == std::vector<int>{2, 10});
  TempDir empty;
  CHECK(ListNeuronDeviceIndices(*MakeRootedFs(empty.path()))->empty());
}

}  // namespace
}  // namespace neuron::sysfs
