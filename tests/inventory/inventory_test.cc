#include "lib/inventory/inventory.h"

#include <filesystem>
#include <map>
#include <tuple>

#include "catch2/catch.hpp"
#include "lib/inventory/emulation.h"
#include "lib/sysfs/device_leaves.h"
#include "lib/sysfs/emulator.h"
#include "lib/sysfs/neuron_driver.h"
#include "tests/sysfs/temp_dir.h"

namespace neuron::inventory {
namespace {

using sysfs::testing::TempDir;

// The parts of a device a scan reads from the driver (everything but layout bookkeeping).
auto DriverView(const Device& d) {
  std::vector<std::tuple<int, std::map<std::string, uint64_t>, std::map<std::string, uint64_t>>>
      cores;
  for (const CoreStats& c : d.cores) cores.emplace_back(c.index, c.status_total, c.other_info);
  return std::make_tuple(d.index, d.pci_address, d.physical_cores, d.core_count, d.connected,
                         d.numa_node, d.hardware, d.host_mem, d.power_utilization, d.arch_type,
                         d.device_name, d.serial_number, d.health_status, d.unhealthy_components,
                         cores);
}

TEST_CASE("inventory of every known shape matches the shape, unscrambled and scrambled",
          "[inventory]") {
  for (const topology::Shape& shape : topology::AllShapes()) {
    DYNAMIC_SECTION(shape.instance_type) {
      std::vector<Inventory> by_layout;
      for (uint64_t seed : {uint64_t{0}, uint64_t{7}}) {
        CAPTURE(seed);
        TempDir dir;
        auto root = PrepareEmulation(shape.instance_type, dir.path(), 0, seed);
        REQUIRE(root.ok());
        auto topo = topology::TopologyForShape(shape);  // family default LNC
        REQUIRE(topo.ok());
        const auto model = topology::ModelForPciDevice(shape.pci_device_id);
        REQUIRE(model.has_value());
        auto fs = sysfs::MakeRootedFs(*root);
        auto inv = ReadInventory(*fs, {.node_name = "node-a", .instance_type = ""});
        REQUIRE(inv.ok());
        CHECK(inv->node_name == "node-a");
        CHECK(inv->instance_type == shape.instance_type);  // from the DMI product name
        CHECK(inv->read_errors == 0);
        CHECK(inv->lnc == model->default_lnc);
        CHECK(inv->lnc_source == "default");
        CHECK(inv->lnc_error.empty());
        REQUIRE(static_cast<int>(inv->devices.size()) == shape.devices);
        CHECK(inv->total_cores == shape.devices * topo->cores_per_device);
        CHECK(inv->total_physical_cores == shape.devices * model->physical_cores);
        const auto addrs = sysfs::EmulatedPciAddress;
        for (int i = 0; i < shape.devices; ++i) {
          const Device& d = inv->devices[static_cast<size_t>(i)];
          CHECK(d.index == i);
          CHECK(d.present);
          CHECK(d.healthy);
          // Every leaf found, each where this tree put it.
          // (notify_delay is located for poll() users but a scan does not read it.)
          CHECK(d.sysfs_paths.count("notify_delay") == 0);
          CHECK(d.sysfs_paths.size() ==
                sysfs::DeviceLeaves().size() - 1 - (d.serial_number.empty() ? 1 : 0));
          for (const auto& [name, path] : d.sysfs_paths) {
            CHECK(path == sysfs::EmulatedLeafPath(seed, sysfs::FindDeviceLeaf(name)->known));
          }
          CHECK(d.health_status.size() == 5);  // the numeric health_status nodes
          CHECK(d.health_status.at("hw_error_event") == 0);
          CHECK(d.unhealthy_components.empty());
          CHECK(d.pci_address == addrs(i));
          CHECK(d.pci_device_id == shape.pci_device_id);
          REQUIRE(d.model.has_value());
          CHECK(d.model->family == shape.family);
          CHECK(d.physical_cores == model->physical_cores);
          CHECK(d.core_count == topo->cores_per_device);
          CHECK(d.connected == shape.links[static_cast<size_t>(i)]);
          CHECK(d.numa_node == (shape.numa_nodes <= 1 ? 0 : i * shape.numa_nodes / shape.devices));
          CHECK(d.driver == "neuron-driver");
          CHECK(d.hardware.size() == sysfs::HardwareCounterNames().size());
          CHECK(d.hardware.at("mem_ecc_uncorrected") == 0);
          CHECK(d.host_mem.size() == sysfs::HostMemCategories().size());
          REQUIRE(d.power_utilization.has_value());
          CHECK(*d.power_utilization == Approx(20.25 + i % 10));
          // One neuron_coreM directory per PHYSICAL core, as the driver makes them.
          REQUIRE(static_cast<int>(d.cores.size()) == d.physical_cores);
          const CoreStats& c = d.cores.back();
          CHECK(c.index == d.physical_cores - 1);
          CHECK(c.status_total.size() == sysfs::CoreStatusCounterNames().size());
          CHECK(c.status_total.at("success") ==
                1000 + 7 * static_cast<uint64_t>(i * 100 + c.index));
          CHECK(c.device_mem.size() == sysfs::DeviceMemCategories().size());
          CHECK(c.other_info.at("inference_count") ==
                500 + static_cast<uint64_t>(i * 100 + c.index));
          CHECK(!c.arch_type.empty());
        }
        by_layout.push_back(*std::move(inv));
      }
      // Same host, two layouts: the same inventory.
      REQUIRE(by_layout.size() == 2);
      CHECK(by_layout[0].total_cores == by_layout[1].total_cores);
      for (size_t i = 0; i < by_layout[0].devices.size(); ++i) {
        CHECK(DriverView(by_layout[0].devices[i]) == DriverView(by_layout[1].devices[i]));
      }
    }
  }
}

TEST_CASE("BuildEmulationSpec writes physical cores and validates LNC", "[inventory]") {
  const topology::Shape* trn2 = topology::FindShape("trn2.48xlarge");
  REQUIRE(trn2 != nullptr);
  CHECK(BuildEmulationSpec(*trn2, 1)->cores_per_device == 8);
  CHECK(BuildEmulationSpec(*trn2, 2)->cores_per_device == 8);
  CHECK(BuildEmulationSpec(*trn2)->cores_per_device == 8);
  CHECK(BuildEmulationSpec(*trn2, 1)->lnc == 1);
  CHECK(BuildEmulationSpec(*trn2)->lnc == 0);
  CHECK(BuildEmulationSpec(*trn2)->scramble_seed == 0);  // driver 2.30.2's layout
  const topology::Shape* inf2 = topology::FindShape("inf2.24xlarge");
  REQUIRE(inf2 != nullptr);
  CHECK(absl::IsInvalidArgument(BuildEmulationSpec(*inf2, 2).status()));
  CHECK(absl::IsNotFound(PrepareEmulation("m5.large", "/tmp/unused").status()));
}

TEST_CASE("PrepareEmulation makes its own temp dir", "[inventory]") {
  auto root = PrepareEmulation("inf2.xlarge", "");
  REQUIRE(root.ok());
  CHECK(std::filesystem::exists(*root + "/sys/class/neuron_device/neuron0"));
  auto inv = ReadInventory(*sysfs::MakeRootedFs(*root));
  REQUIRE(inv.ok());
  CHECK(inv->devices.size() == 1);
  std::filesystem::remove_all(*root);
}

sysfs::EmulationSpec Trn1x4() {
  sysfs::EmulationSpec s;
  s.instance_type = "custom";  // not a known shape: exercises the fallbacks
  s.pci_device_id = 0x7164;
  s.devices = 4;
  s.cores_per_device = 2;
  s.links = {{1}, {0, 2}, {1, 3}, {2}};
  s.numa_nodes = 1;
  return s;
}

TEST_CASE("unknown device ids are reported, not fatal", "[inventory]") {
  TempDir dir;
  sysfs::EmulationSpec s = Trn1x4();
  s.pci_device_id = 0x7999;
  REQUIRE(sysfs::WriteEmulatedTree(dir.path(), s).ok());
  auto inv = ReadInventory(*sysfs::MakeRootedFs(dir.path()));
  REQUIRE(inv.ok());
  REQUIRE(inv->devices.size() == 4);
  CHECK(inv->devices[0].pci_device_id == 0x7999);
  CHECK_FALSE(inv->devices[0].model.has_value());
  CHECK(inv->instance_type.empty());
  CHECK(inv->read_errors == 0);
}

TEST_CASE("instance type: explicit option, then DMI, then inference", "[inventory]") {
  TempDir dir;
  REQUIRE(sysfs::WriteEmulatedTree(dir.path(), Trn1x4()).ok());
  auto fs = sysfs::MakeRootedFs(dir.path());
  CHECK(ReadInventory(*fs)->instance_type.empty());  // 4 trn1 devices: no such shape
  CHECK(ReadInventory(*fs)->driver_instance_type == "Trn1");
  CHECK(ReadInventory(*fs, {.node_name = "", .instance_type = "trn1.32xlarge"})->instance_type ==
        "trn1.32xlarge");

  TempDir one;
  sysfs::EmulationSpec s = Trn1x4();
  s.devices = 1;
  s.links = {{}};
  REQUIRE(sysfs::WriteEmulatedTree(one.path(), s).ok());
  // One trn1 device: only trn1.2xlarge fits.
  CHECK(ReadInventory(*sysfs::MakeRootedFs(one.path()))->instance_type == "trn1.2xlarge");
}

TEST_CASE("garbled, empty and missing files are counted, not fatal", "[inventory]") {
  TempDir dir;
  REQUIRE(sysfs::WriteEmulatedTree(dir.path(), Trn1x4()).ok());
  namespace em = sysfs::emulation;
  REQUIRE(em::WriteAttribute(dir.path(), 1, "core_count", "two").ok());
  REQUIRE(em::WriteAttribute(dir.path(), 2, "stats/hardware/mem_ecc_uncorrected", "").ok());
  REQUIRE(em::WriteAttribute(dir.path(), 3, "connected_devices", "2, \n").ok());
  REQUIRE(
      em::WriteAttribute(dir.path(), 0, "stats/power/utilization", "POWER_STATUS_VALID,1").ok());
  REQUIRE(em::RemoveAttribute(dir.path(), 0, "info/architecture/arch_type").ok());
  auto fs = sysfs::MakeRootedFs(dir.path());
  Scanner scanner(*fs);  // keeps a reference: fs must outlive it
  auto inv = scanner.Scan();
  REQUIRE(inv.ok());
  REQUIRE(inv->devices.size() == 4);
  CHECK(inv->read_errors == 5);
  CHECK(inv->devices[1].core_count == 0);
  CHECK(inv->devices[2].hardware.count("mem_ecc_uncorrected") == 0);
  CHECK(inv->devices[2].hardware.count("sram_ecc_uncorrected") == 1);
  CHECK(inv->devices[3].connected.empty());
  CHECK_FALSE(inv->devices[0].power_utilization.has_value());
  CHECK(inv->devices[0].arch_type.empty());
  CHECK(inv->total_cores == 6);
  // Cumulative: the same faults count again on the next scan.
  CHECK(scanner.Scan()->read_errors == 10);
  // Fixed files stop counting.
  REQUIRE(em::WriteAttribute(dir.path(), 1, "core_count", "2").ok());
  CHECK(scanner.Scan()->read_errors == 14);
}

TEST_CASE("a device vanishing between scans is simply absent", "[inventory]") {
  TempDir dir;
  REQUIRE(sysfs::WriteEmulatedTree(dir.path(), Trn1x4()).ok());
  auto fs = sysfs::MakeRootedFs(dir.path());
  Scanner scanner(*fs);  // keeps a reference: fs must outlive it
  REQUIRE(scanner.Scan()->devices.size() == 4);
  REQUIRE(sysfs::emulation::RemoveDevice(dir.path(), 2).ok());
  auto inv = scanner.Scan();
  REQUIRE(inv.ok());
  REQUIRE(inv->devices.size() == 3);
  CHECK(inv->devices[2].index == 3);
  CHECK(inv->devices[2].pci_address == sysfs::EmulatedPciAddress(3));  // PCI re-enumerated
  CHECK(inv->read_errors == 0);
}

TEST_CASE("a device whose class dir is a dangling link mid-scan does not crash", "[inventory]") {
  TempDir dir;
  REQUIRE(sysfs::WriteEmulatedTree(dir.path(), Trn1x4()).ok());
  // The class link still exists but the device directory is gone (removal in progress).
  std::filesystem::remove_all(dir.path() + "/sys/devices/virtual/neuron_device/neuron1");
  auto inv = ReadInventory(*sysfs::MakeRootedFs(dir.path()));
  REQUIRE(inv.ok());
  CHECK(inv->devices.size() == 3);
}

TEST_CASE("a host root without a Neuron driver is an empty inventory", "[inventory]") {
  TempDir dir;
  auto inv = ReadInventory(*sysfs::MakeRootedFs(dir.path()));
  REQUIRE(inv.ok());
  CHECK(inv->devices.empty());
  CHECK(inv->total_cores == 0);
}

TEST_CASE("the real host has no Neuron devices and reads cleanly", "[inventory]") {
  auto fs = sysfs::MakeRootedFs("/");
  auto inv = ReadInventory(*fs);
  REQUIRE(inv.ok());
  auto indices = sysfs::ListNeuronDeviceIndices(*fs);
  REQUIRE(indices.ok());
  CHECK(inv->devices.size() == indices->size());
}

}  // namespace
}  // namespace neuron::inventory
