#include "lib/sysfs/pci.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "catch2/catch.hpp"
#include "lib/sysfs/emulator.h"
#include "lib/sysfs/neuron_driver.h"
#include "tests/sysfs/temp_dir.h"

namespace neuron::sysfs {
namespace {

using testing::TempDir;

EmulationSpec Spec(uint16_t id, int devices, int cores, int numa) {
  EmulationSpec s;
  s.instance_type = "test";
  s.pci_device_id = id;
  s.devices = devices;
  s.cores_per_device = cores;
  s.numa_nodes = numa;
  return s;
}

// A non-Neuron function laid out like the kernel does (NVMe controller).
void AddForeignDevice(const TempDir& dir) {
  const std::string real = "sys/devices/pci0000:00/0000:00:04.0";
  dir.Write(real + "/vendor", "0x1d0f\n");  // Amazon too: only the id differs
  dir.Write(real + "/device", "0x8061\n");
  dir.Write(real + "/class", "0x010802\n");
  dir.Write(real + "/numa_node", "-1\n");
  dir.Write(real + "/irq", "11\n");
  dir.Write(real + "/config", std::string(64, '\0'));
  dir.Symlink("../../../devices/pci0000:00/0000:00:04.0", "sys/bus/pci/devices/0000:00:04.0");
  const std::string intel = "sys/devices/pci0000:00/0000:00:01.0";
  dir.Write(intel + "/vendor", "0x8086\n");
  dir.Write(intel + "/device", "0x7000\n");
  dir.Write(intel + "/class", "0x060100\n");
  dir.Symlink("../../../devices/pci0000:00/0000:00:01.0", "sys/bus/pci/devices/0000:00:01.0");
}

TEST_CASE("libpci enumerates emulated trees of several shapes", "[sysfs][pci]") {
  struct Case {
    uint16_t id;
    int devices, cores, numa;
  };
  const Case cases[] = {{0x7064, 1, 4, 1}, {0x7064, 16, 4, 2}, {0x7164, 16, 2, 2},
                        {0x7264, 6, 2, 1}, {0x7364, 16, 4, 2}, {0x7364, 1, 8, 1}};
  for (const Case& c : cases) {
    DYNAMIC_SECTION("id " << c.id << " x" << c.devices) {
      TempDir dir;
      auto addrs = WriteEmulatedTree(dir.path(), Spec(c.id, c.devices, c.cores, c.numa));
      REQUIRE(addrs.ok());
      REQUIRE(static_cast<int>(addrs->size()) == c.devices);
      AddForeignDevice(dir);
      auto fs = MakeRootedFs(dir.path());
      auto devs = ListNeuronPciDevices(*fs);
      REQUIRE(devs.ok());
      REQUIRE(static_cast<int>(devs->size()) == c.devices + 1);  // + the Amazon NVMe
      int neuron = 0;
      for (const PciDevice& d : *devs) {
        CHECK(d.vendor_id == 0x1d0f);
        if (d.device_id == 0x8061) {
          CHECK(d.driver.empty());
          CHECK(d.class_code == 0x010802);
          continue;
        }
        CHECK(d.address == (*addrs)[static_cast<size_t>(neuron)]);
        CHECK(d.device_id == c.id);
        CHECK(d.class_code == 0x088000);
        CHECK(d.driver == "neuron-driver");
        CHECK(d.numa_node == (c.numa == 1 ? 0 : neuron * c.numa / c.devices));
        ++neuron;
      }
      CHECK(neuron == c.devices);
      auto all = ListPciDevices(*fs, {});
      REQUIRE(all.ok());
      CHECK(all->size() == devs->size() + 1);  // + the Intel bridge
    }
  }
}

TEST_CASE("libpci config reads agree with the sysfs attribute files", "[sysfs][pci]") {
  TempDir dir;
  REQUIRE(WriteEmulatedTree(dir.path(), Spec(0x7164, 2, 2, 1)).ok());
  const std::string cfg_path =
      dir.path() + "/sys/bus/pci/devices/" + EmulatedPciAddress(1) + "/config";
  REQUIRE(std::filesystem::file_size(cfg_path) == 256);
  std::ifstream in(cfg_path, std::ios::binary);
  std::string cfg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto u8 = [&cfg](size_t i) { return static_cast<unsigned>(static_cast<unsigned char>(cfg[i])); };
  CHECK((u8(0) | u8(1) << 8) == 0x1d0f);
  CHECK((u8(2) | u8(3) << 8) == 0x7164);
  CHECK((u8(0x9) | u8(0xa) << 8 | u8(0xb) << 16) == 0x088000);
  CHECK((u8(0x2c) | u8(0x2d) << 8) == 0x1d0f);
}

TEST_CASE("libpci errors become Status instead of exiting", "[sysfs][pci]") {
  TempDir dir;
  REQUIRE(WriteEmulatedTree(dir.path(), Spec(0x7164, 2, 2, 1)).ok());
  auto fs = MakeRootedFs(dir.path());

  SECTION("an unparsable entry in devices/") {
    dir.Write("sys/bus/pci/devices/garbage", "");
    auto devs = ListNeuronPciDevices(*fs);
    REQUIRE(absl::IsUnavailable(devs.status()));
    CHECK(std::string(devs.status().message()).find("garbage") != std::string::npos);
  }
  SECTION("a function whose mandatory vendor file vanished") {
    std::filesystem::remove(dir.path() + "/sys/devices/pci0000:10/" + EmulatedPciAddress(1) +
                            "/vendor");
    auto devs = ListNeuronPciDevices(*fs);
    REQUIRE(absl::IsUnavailable(devs.status()));
    CHECK(std::string(devs.status().message()).find("vendor") != std::string::npos);
  }
  SECTION("a dangling bus link (device gone mid-scan)") {
    dir.Symlink("../../../devices/pci0000:99/0000:99:00.0", "sys/bus/pci/devices/0000:99:00.0");
    CHECK(absl::IsUnavailable(ListNeuronPciDevices(*fs).status()));
  }
  // After any of these the next call works again (no state left behind).
  std::filesystem::remove(dir.path() + "/sys/bus/pci/devices/garbage");
  std::filesystem::remove(dir.path() + "/sys/bus/pci/devices/0000:99:00.0");
  auto again = ListNeuronPciDevices(*fs);
  if (std::filesystem::exists(dir.path() + "/sys/devices/pci0000:10/" + EmulatedPciAddress(1) +
                              "/vendor")) {
    REQUIRE(again.ok());
    CHECK(again->size() == 2);
  }
}

TEST_CASE("no PCI bus at the root is NotFound", "[sysfs][pci]") {
  TempDir dir;
  auto fs = MakeRootedFs(dir.path());
  CHECK(absl::IsNotFound(ListNeuronPciDevices(*fs).status()));
}

TEST_CASE("the real bus at / has no Neuron device here and no error", "[sysfs][pci]") {
  auto fs = MakeRootedFs("/");
  if (!fs->Exists("sys/bus/pci/devices")) {
    WARN("no /sys/bus/pci on this machine: skipped");
    return;
  }
  auto all = ListPciDevices(*fs, {});
  REQUIRE(all.ok());
  auto neuron = ListPciDevices(*fs, PciFilter{.vendor_id = 0x1d0f});
  REQUIRE(neuron.ok());
  int real_neuron = 0;
  for (const PciDevice& d : *all) {
    CHECK(d.address.size() == 12);
    if (d.vendor_id == 0x1d0f && d.device_id >= 0x7064 && d.device_id <= 0x7565) ++real_neuron;
  }
  // Neuron chips on the bus == neuronN devices of the driver (both 0 on the build machines).
  auto indices = ListNeuronDeviceIndices(*fs);
  REQUIRE(indices.ok());
  CHECK(real_neuron == static_cast<int>(indices->size()));
}

TEST_CASE("unbound functions report an empty driver", "[sysfs][pci]") {
  TempDir dir;
  REQUIRE(WriteEmulatedTree(dir.path(), Spec(0x7264, 3, 2, 1)).ok());
  REQUIRE(emulation::UnbindDriver(dir.path(), 1).ok());
  auto fs = MakeRootedFs(dir.path());
  auto devs = ListNeuronPciDevices(*fs);
  REQUIRE(devs.ok());
  REQUIRE(devs->size() == 3);
  CHECK((*devs)[0].driver == "neuron-driver");
  CHECK((*devs)[1].driver.empty());
  CHECK((*devs)[2].driver == "neuron-driver");
}

}  // namespace
}  // namespace neuron::sysfs
