// File: tests/deviceplugin/lnc_source_test.cc
// LNC end to end through the plugin's view: an emulated trn2.48xlarge (physical core_count, as
// the driver prints it) scanned, converted to a snapshot, advertised and allocated.
#include "catch2/catch.hpp"
#include "lib/deviceplugin/allocator.h"
#include "lib/deviceplugin/inventory_source.h"
#include "lib/inventory/emulation.h"
#include "lib/inventory/inventory.h"
#include "lib/sysfs/fs.h"
#include "tests/sysfs/temp_dir.h"

namespace neuron::deviceplugin {
namespace {

struct Trn2Node {
  Trn2Node(int lnc_file, inventory::LncInputs in = {}) {
    // tmpfs: a trn2.48xlarge tree is thousands of files.
    root = *inventory::PrepareEmulation("trn2.48xlarge", dir.path(), lnc_file);
    auto fs = sysfs::MakeRootedFs(root);
    inventory::ScanOptions o;
    o.lnc = std::move(in);
    inv = *inventory::ReadInventory(*fs, o);
    snap = SnapshotFromInventory(inv);
  }
  sysfs::testing::TempDir dir;
  std::string root;
  inventory::Inventory inv;
  NodeSnapshot snap;
};

TEST_CASE("trn2.48xlarge advertises 64 neuroncore at LNC 2 and 128 at LNC 1", "[lnc]") {
  for (int lnc : {1, 2}) {
    DYNAMIC_SECTION("LNC " << lnc) {
      Trn2Node node(lnc);
      CHECK(node.snap.cores_per_device() == 8 / lnc);
      CHECK(node.snap.total_cores() == 128 / lnc);
      CHECK(Allocator(assignment::ResourceKind::kCore).Devices(node.snap).size() == 128u / lnc);
      CHECK(Allocator(assignment::ResourceKind::kDevice).Devices(node.snap).size() == 16u);
      CHECK(node.snap.topology.cores_per_device == 8 / lnc);
      // Logical cores 8 and 9: device 2 at LNC 2, device 1 at LNC 1.
      AllocatorOptions host;
      host.numbering = CoreNumbering::kHost;
      auto in_container =
          Allocator(assignment::ResourceKind::kCore).Allocate(node.snap, {"8", "9"});
      auto on_host =
          Allocator(assignment::ResourceKind::kCore, host).Allocate(node.snap, {"8", "9"});
      REQUIRE(in_container.ok());
      REQUIRE(on_host.ok());
      CHECK(in_container->envs.at("NEURON_RT_VISIBLE_CORES") == "0-1");
      CHECK(on_host->envs.at("NEURON_RT_VISIBLE_CORES") == "8-9");
      CHECK(in_container->envs.at("AWS_NEURON_VISIBLE_DEVICES") == (lnc == 2 ? "2" : "1"));
      // A whole device holds all its logical cores.
      auto dev = Allocator(assignment::ResourceKind::kDevice, host).Allocate(node.snap, {"1"});
      REQUIRE(dev.ok());
      CHECK(dev->envs.at("NEURON_RT_VISIBLE_CORES") == (lnc == 2 ? "4-7" : "8-15"));
    }
  }
}

TEST_CASE("the family default (no file) is LNC 2 on trn2", "[lnc]") {
  Trn2Node node(0);
  CHECK(node.inv.lnc_source == "default");
  CHECK(node.snap.total_cores() == 64);
}

TEST_CASE("an unreadable LNC keeps devices and withholds neuroncore", "[lnc]") {
  inventory::LncInputs in;
  in.env = "2.5";
  Trn2Node node(0, in);
  CHECK(node.inv.lnc == 0);
  CHECK(node.inv.lnc_error.find("NEURON_LOGICAL_NC_CONFIG") != std::string::npos);
  CHECK(Allocator(assignment::ResourceKind::kCore).Devices(node.snap).empty());
  const auto devices = Allocator(assignment::ResourceKind::kDevice).Devices(node.snap);
  REQUIRE(devices.size() == 16u);
  CHECK(devices[0].healthy);
  auto dev = Allocator(assignment::ResourceKind::kDevice).Allocate(node.snap, {"0"});
  REQUIRE(dev.ok());
  CHECK(dev->envs.count("NEURON_RT_VISIBLE_CORES") == 0);  // unset, not a guess
  CHECK(dev->envs.at("AWS_NEURON_VISIBLE_DEVICES") == "0");
  CHECK_FALSE(Allocator(assignment::ResourceKind::kCore).Allocate(node.snap, {"0"}).ok());
}

}  // namespace
}  // namespace neuron::deviceplugin
