// Property: wherever the driver puts its device-level nodes inside the device directory, a scan
// and the health probe read every value they read at driver 2.30.2's places, cold (a new
// Scanner) and warm (one that remembered the old places).
#include <filesystem>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "catch2/catch.hpp"
#include "lib/inventory/emulation.h"
#include "lib/inventory/health_probe.h"
#include "lib/inventory/inventory.h"
#include "lib/sysfs/device_leaves.h"
#include "lib/sysfs/neuron_driver.h"
#include "tests/sysfs/temp_dir.h"

namespace neuron::inventory {
namespace {

namespace stdfs = std::filesystem;

// Everything a scan reads from the driver, without where it was found.
auto Values(const Device& d) {
  std::vector<std::tuple<int, std::map<std::string, uint64_t>, std::map<std::string, uint64_t>>>
      cores;
  for (const CoreStats& c : d.cores) cores.emplace_back(c.index, c.status_total, c.other_info);
  return std::make_tuple(d.index, d.physical_cores, d.core_count, d.connected, d.hardware,
                         d.host_mem, d.power_utilization, d.arch_type, d.device_name,
                         d.serial_number, d.health_status, d.unhealthy_components, cores);
}

// Moves each device-level leaf of every device, with probability 3/4, to a random directory
// (0-3 levels) below the device directory. Returns how many moved.
int Relocate(const std::string& root, int devices, std::mt19937_64& rng) {
  // None of these is a leaf's name or starts with neuron_core, so nothing collides.
  static const std::vector<std::string> kParts = {"a", "b", "stats", "info", "x1", "moved", "hw"};
  int moved = 0;
  for (int i = 0; i < devices; ++i) {
    const std::string dev = root + "/sys/devices/virtual/neuron_device/neuron" + std::to_string(i);
    for (const sysfs::DeviceLeaf& leaf : sysfs::DeviceLeaves()) {
      const std::string from = dev + "/" + leaf.known;
      if (!stdfs::exists(from) || rng() % 4 == 0) continue;
      std::string dir = dev;
      for (uint64_t depth = rng() % 4; depth > 0; --depth) {
        dir += "/" + kParts[rng() % kParts.size()];
      }
      const std::string to = dir + "/" + leaf.name;
      if (to == from) continue;
      stdfs::create_directories(dir);
      stdfs::rename(from, to);
      ++moved;
    }
  }
  return moved;
}

TEST_CASE("scans read every value wherever the device-level nodes are moved",
          "[inventory][leaves]") {
  const topology::Shape* shape = topology::FindShape("inf2.24xlarge");
  REQUIRE(shape != nullptr);
  for (uint64_t trial = 1; trial <= 12; ++trial) {
    DYNAMIC_SECTION("trial " << trial) {
      sysfs::testing::TempDir dir;
      auto root = PrepareEmulation(shape->instance_type, dir.path());
      REQUIRE(root.ok());
      auto fs = sysfs::MakeRootedFs(*root);
      Scanner warm(*fs);
      const absl::StatusOr<Inventory> before = warm.Scan();
      REQUIRE(before.ok());
      REQUIRE(before->read_errors == 0);

      std::mt19937_64 rng(trial);
      CHECK(Relocate(*root, shape->devices, rng) > 0);

      Scanner cold(*fs);
      for (Scanner* s : {&cold, &warm}) {
        const absl::StatusOr<Inventory> after = s->Scan();
        REQUIRE(after.ok());
        CHECK(after->read_errors == 0);
        REQUIRE(after->devices.size() == before->devices.size());
        for (size_t i = 0; i < after->devices.size(); ++i) {
          const Device& d = after->devices[i];
          CAPTURE(i);
          CHECK(Values(d) == Values(before->devices[i]));
          for (const auto& [name, path] : d.sysfs_paths) {  // each place is where it is now
            CHECK(stdfs::exists(*root + "/" + sysfs::NeuronDeviceDir(d.index) + "/" + path));
            CHECK(stdfs::path(path).filename() == name);
          }
        }
      }
    }
  }
}

TEST_CASE("the health probe follows moved counters at its next Reset, and sees a fault there",
          "[inventory][leaves]") {
  const topology::Shape* shape = topology::FindShape("inf2.24xlarge");
  REQUIRE(shape != nullptr);
  sysfs::testing::TempDir dir;
  auto root = PrepareEmulation(shape->instance_type, dir.path());
  REQUIRE(root.ok());
  auto fs = sysfs::MakeRootedFs(*root);
  std::vector<std::pair<int, std::string>> devices;
  for (int i = 0; i < shape->devices; ++i) devices.emplace_back(i, "");
  HealthProbe probe(*fs);
  probe.Reset(devices);
  for (const HealthReading& r : probe.Read()) {
    for (const auto& c : r.counters) CHECK(c == uint64_t{0});
  }

  std::mt19937_64 rng(42);
  while (Relocate(*root, shape->devices, rng) == 0) {
  }
  probe.Read();          // moved counters fail here...
  probe.Reset(devices);  // ...and are looked for again (the full rescan's pace)
  for (const HealthReading& r : probe.Read()) {
    CAPTURE(r.index);
    CHECK(r.class_dir);
    for (const auto& c : r.counters) CHECK(c == uint64_t{0});
  }

  sysfs::DeviceLeafLocator leaves(*fs);
  const std::optional<std::string> counter = leaves.Find(3, "mem_ecc_uncorrected");
  REQUIRE(counter.has_value());
  {
    std::ofstream out(*root + "/" + *counter);
    out << "4\n";
  }
  CHECK(probe.Read()[3].counters[0] == uint64_t{4});
}

}  // namespace
}  // namespace neuron::inventory
