// File: tests/dra/inventory_node_test.cc
// The DRA driver's view of an inventory: health policy (ECC evicts, a vanished or unbound device
// only stops scheduling), unknown shapes and unresolved LNC refused, node facts for claims.
#include "lib/dra/inventory_node.h"

#include <catch2/catch.hpp>

#include "lib/topology/device_model.h"

namespace neuron::dra {
namespace {

inventory::Inventory Trn2(int devices) {
  inventory::Inventory inv;
  inv.instance_type = "trn2.48xlarge";
  inv.lnc = 2;
  inv.driver_version = "2.31.7.0";
  for (int i = 0; i < devices; ++i) {
    inventory::Device d;
    d.index = i;
    d.physical_cores = 8;
    d.model = topology::ModelForPciDevice(0x7364);
    inv.devices.push_back(d);
  }
  return inv;
}

TEST_CASE("health: ECC errors evict, vanished and unbound devices only stop scheduling",
          "[dra][app]") {
  inventory::Device d;
  CHECK(HealthOf(d).healthy);
  d.healthy = false;
  d.unhealthy_reason = "uncorrectable ECC error";
  CHECK(HealthOf(d).evict);
  CHECK(HealthOf(d).reason == "uncorrectable ECC error");
  d.unhealthy_reason = "driver unbound";
  CHECK_FALSE(HealthOf(d).evict);
  d.healthy = true;
  d.present = false;
  d.unhealthy_reason = "";
  CHECK_FALSE(HealthOf(d).healthy);
  CHECK(HealthOf(d).reason == "unhealthy");
}

TEST_CASE("node device info from the inventory", "[dra][app]") {
  inventory::Inventory inv = Trn2(16);
  inv.devices[4].healthy = false;
  inv.devices[4].unhealthy_reason = "vanished";
  auto n = NodeDeviceInfoFromInventory(inv, "node-1", "0.1.0");
  REQUIRE(n.ok());
  CHECK(n->node_name == "node-1");
  CHECK(n->shape == topology::FindShape("trn2.48xlarge"));
  CHECK(n->lnc == 2);
  CHECK(n->neuron_driver_version == "2.31.7.0");
  CHECK(n->dra_driver_version == "0.1.0");
  REQUIRE(n->health.size() == 1);
  CHECK(n->health.at(4).reason == "vanished");

  inv.driver_version.clear();
  CHECK(NodeDeviceInfoFromInventory(inv, "n", "v")->neuron_driver_version == "unknown");
  inv.lnc = 0;
  inv.lnc_error = "NEURON_LOGICAL_NC_CONFIG: bad";
  CHECK(NodeDeviceInfoFromInventory(inv, "n", "v").status().code() ==
        absl::StatusCode::kFailedPrecondition);
  inv.lnc = 2;
  inv.instance_type = "";
  CHECK(NodeDeviceInfoFromInventory(inv, "n", "v").status().code() ==
        absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("node facts for claim preparation", "[dra][app]") {
  auto f = NodeFactsFromInventory(Trn2(16));
  REQUIRE(f.ok());
  CHECK(f->devices == 16);
  CHECK(f->physical_cores_per_device == 8);
  CHECK(f->node_lnc == 2);
  CHECK(f->lnc2_supported);
  CHECK(NodeFactsFromInventory(inventory::Inventory{}).status().code() ==
        absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace neuron::dra
