#include "lib/sysfs/driver_layout.h"

#include "catch2/catch.hpp"
#include "lib/sysfs/emulator.h"
#include "lib/sysfs/neuron_driver.h"
#include "lib/sysfs/parsers.h"
#include "tests/sysfs/temp_dir.h"

namespace neuron::sysfs {
namespace {

using testing::TempDir;

EmulationSpec Trn2x2(DriverLayout layout) {
  EmulationSpec s;
  s.instance_type = "custom";
  s.pci_device_id = 0x7364;
  s.devices = 2;
  s.cores_per_device = 8;  // physical, as the driver prints
  s.links = {{1}, {0}};
  s.layout = layout;
  return s;
}

TEST_CASE("layout names round-trip and garbage is rejected", "[sysfs][layout]") {
  for (DriverLayout l : {DriverLayout::kLegacy, DriverLayout::kCurrent}) {
    CHECK(ParseDriverLayout(DriverLayoutName(l)) == l);
  }
  CHECK_FALSE(ParseDriverLayout("new").has_value());
  CHECK_FALSE(ParseDriverLayout("").has_value());
}

TEST_CASE("every moved attribute has a distinct path per layout", "[sysfs][layout]") {
  for (DeviceAttr a :
       {DeviceAttr::kCoreCount, DeviceAttr::kConnectedDevices, DeviceAttr::kHardwareDir,
        DeviceAttr::kHostMemDir, DeviceAttr::kPowerUtilization}) {
    const std::string legacy = DeviceAttrRelPath(DriverLayout::kLegacy, a);
    const std::string current = DeviceAttrRelPath(DriverLayout::kCurrent, a);
    CHECK_FALSE(legacy.empty());
    CHECK_FALSE(current.empty());
    CHECK(legacy != current);
    CHECK(TranslateLegacyRelPath(DriverLayout::kCurrent, legacy) == current);
    CHECK(TranslateLegacyRelPath(DriverLayout::kLegacy, legacy) == legacy);
  }
  CHECK(TranslateLegacyRelPath(DriverLayout::kCurrent, "stats/hardware/mem_ecc_uncorrected") ==
        DeviceAttrRelPath(DriverLayout::kCurrent, DeviceAttr::kHardwareDir) +
            "/mem_ecc_uncorrected");
  // Per-core paths are the same in both layouts.
  CHECK(TranslateLegacyRelPath(DriverLayout::kCurrent, "neuron_core0/stats/status/failure/total") ==
        "neuron_core0/stats/status/failure/total");
}

TEST_CASE("the layout is detected per device", "[sysfs][layout]") {
  for (DriverLayout l : {DriverLayout::kLegacy, DriverLayout::kCurrent}) {
    DYNAMIC_SECTION(DriverLayoutName(l)) {
      TempDir dir;
      REQUIRE(WriteEmulatedTree(dir.path(), Trn2x2(l)).ok());
      auto fs = MakeRootedFs(dir.path());
      CHECK(DetectDriverLayout(*fs, 0) == l);
      CHECK(DetectDriverLayout(*fs, 1) == l);
      CHECK_FALSE(DetectDriverLayout(*fs, 7).has_value());  // no such device
      CHECK(*ParseCoreCount(*fs->ReadFile(DeviceAttrPath(l, 1, DeviceAttr::kCoreCount))) == 8);
      CHECK(*ListNeuronCoreIndices(*fs, 1) == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
      // The other layout's nodes are absent, so nothing reads a stale copy.
      const DriverLayout other =
          l == DriverLayout::kLegacy ? DriverLayout::kCurrent : DriverLayout::kLegacy;
      CHECK_FALSE(fs->Exists(DeviceAttrPath(other, 1, DeviceAttr::kCoreCount)));
      CHECK_FALSE(fs->Exists(DeviceAttrPath(other, 1, DeviceAttr::kHardwareDir)));
      // A device without core_count is undetectable, not misdetected.
      REQUIRE(emulation::RemoveAttribute(dir.path(), 0, "core_count").ok());
      CHECK_FALSE(DetectDriverLayout(*fs, 0).has_value());
    }
  }
}

TEST_CASE("uncorrectable error counter paths follow the detected layout", "[sysfs][layout]") {
  for (DriverLayout l : {DriverLayout::kLegacy, DriverLayout::kCurrent}) {
    DYNAMIC_SECTION(DriverLayoutName(l)) {
      TempDir dir;
      REQUIRE(WriteEmulatedTree(dir.path(), Trn2x2(l)).ok());
      auto fs = MakeRootedFs(dir.path());
      const std::vector<std::string> paths = UncorrectableErrorCounterPaths(*fs, 1);
      REQUIRE(paths.size() == UncorrectableErrorCounters().size());
      // Fault injection takes legacy-relative paths and lands where the health code reads.
      REQUIRE(emulation::SetCounter(dir.path(), 1, "stats/hardware/mem_ecc_uncorrected", 5).ok());
      CHECK(paths[0] == DeviceAttrPath(l, 1, DeviceAttr::kHardwareDir) + "/mem_ecc_uncorrected");
      CHECK(*ParseU64(*fs->ReadFile(paths[0])) == 5);
      CHECK(*ParseU64(*fs->ReadFile(paths[1])) == 0);
    }
  }
}

TEST_CASE("logical_nc_config is written only when LNC is given", "[sysfs][layout]") {
  TempDir dir;
  EmulationSpec s = Trn2x2(DriverLayout::kCurrent);
  REQUIRE(WriteEmulatedTree(dir.path(), s).ok());
  auto fs = MakeRootedFs(dir.path());
  CHECK_FALSE(fs->Exists("opt/aws/neuron/logical_nc_config"));
  s.lnc = 1;
  REQUIRE(WriteEmulatedTree(dir.path(), s).ok());
  CHECK(*ParseLogicalNcConfig(*fs->ReadFile("opt/aws/neuron/logical_nc_config")) == 1);
  // Physical counts whatever the LNC: the driver is blind to it.
  CHECK(*ParseCoreCount(*fs->ReadFile(DeviceAttrPath(s.layout, 0, DeviceAttr::kCoreCount))) == 8);
}

TEST_CASE("ParseLogicalNcConfig reads what EKS user data writes", "[sysfs][parsers]") {
  CHECK(*ParseLogicalNcConfig("NEURON_LOGICAL_NC_CONFIG=1") == 1);  // printf without newline
  CHECK(*ParseLogicalNcConfig("NEURON_LOGICAL_NC_CONFIG=2\n") == 2);
  CHECK(*ParseLogicalNcConfig("# set by user data\nexport NEURON_LOGICAL_NC_CONFIG=\"1\"\n") == 1);
  CHECK(*ParseLogicalNcConfig("2\n") == 2);
  CHECK(*ParseLogicalNcConfig("NEURON_LOGICAL_NC_CONFIG=2\nNEURON_LOGICAL_NC_CONFIG=1\n") == 1);
  for (const char* bad : {"", "\n", "# only a comment\n", "NEURON_LOGICAL_NC_CONFIG=", "two",
                          "NEURON_LOGICAL_NC_CONFIG=x", "OTHER=1", "NEURON_LOGICAL_NC_CONFIG 1",
                          "NEURON_LOGICAL_NC_CONFIG=-1", "NEURON_LOGICAL_NC_CONFIG=99"}) {
    CAPTURE(bad);
    CHECK(absl::IsInvalidArgument(ParseLogicalNcConfig(bad).status()));
  }
  CHECK(*ParseLncValue(" 2 ") == 2);
  CHECK_FALSE(ParseLncValue("0").ok());
  CHECK_FALSE(ParseLncValue("2x").ok());
}

}  // namespace
}  // namespace neuron::sysfs
