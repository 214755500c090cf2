#include "lib/agent/collector.h"

#include "catch2/catch.hpp"
#include "lib/metrics/exposition.h"
#include "tests/testing/promtool.h"

namespace neuron::agent {
namespace {

inventory::Inventory TwoDevices() {
  inventory::Inventory inv;
  inv.node_name = "node-a";
  inv.instance_type = "trn1.32xlarge";
  inv.read_errors = 3;
  for (int i = 0; i < 2; ++i) {
    inventory::Device d;
    d.index = i;
    d.pci_address = "0000:10:1" + std::to_string(i) + ".0";
    d.pci_device_id = 0x7164;
    d.model = topology::ModelForPciDevice(0x7164);
    d.core_count = 2;
    d.physical_cores = 2;
    d.hardware = {{"mem_ecc_uncorrected", static_cast<uint64_t>(i)},
                  {"sram_ecc_uncorrected", 0},
                  {"mem_ecc_corrected", static_cast<uint64_t>(7 * i)}};
    d.health_status = {{"hw_error_event", static_cast<uint64_t>(2 * i)},
                       {"healthcheck_heartbeat", static_cast<uint64_t>(100 + i)}};
    d.host_mem = {{"tensors", 4096}};
    d.power_utilization = 42.0;
    for (int c = 0; c < 2; ++c) {
      inventory::CoreStats core;
      core.index = c;
      core.status_total = {{"success", 10}, {"failure", 1}};
      core.status_present = {{"success", 2}};
      core.device_mem = {{"tensors", {.total = 100, .present = 50, .peak = 80}}};
      core.other_info = {{"flop_count", 7}, {"nc_time_in_use", 2500000}, {"brand_new_counter", 1}};
      d.cores.push_back(core);
    }
    inv.devices.push_back(d);
  }
  inv.total_cores = 4;
  inv.total_physical_cores = 4;
  inv.lnc = 1;
  inv.lnc_source = "default";
  return inv;
}

std::string Render(const inventory::Inventory& inv) {
  auto collector = std::make_shared<InventoryCollector>([inv] { return inv; });
  return metrics::Expose({collector});
}

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST_CASE("collector exports the required families with their labels", "[agent]") {
  const std::string text = Render(TwoDevices());
  CHECK(Has(text, "neuron_node_devices 2"));
  CHECK(Has(text, "neuron_node_cores 4"));
  CHECK(Has(text, "neuron_node_physical_cores 4"));
  CHECK(Has(text, "neuron_node_lnc{source=\"default\"} 1"));
  CHECK(Has(text, "neuron_node_lnc_valid 1"));
  CHECK(Has(text, "neuron_agent_sysfs_read_errors_total 3"));
  CHECK(Has(text,
            "neuron_device_info{device=\"1\",pci_address=\"0000:10:11.0\",device_id=\"7164\","
            "family=\"trainium\"} 1"));
  CHECK(Has(text, "neuron_device_healthy{device=\"0\"} 1"));
  CHECK(Has(text,
            "neuron_device_hardware_errors_total{device=\"1\",counter=\"mem_ecc_uncorrected\"} 1"));
  CHECK(Has(text,
            "neuron_device_hardware_errors_total{device=\"1\",counter=\"mem_ecc_corrected\"} 7"));
  CHECK(Has(text,
            "neuron_device_health_status_errors_total{device=\"1\",counter=\"hw_error_event\"} 2"));
  CHECK(Has(text, "neuron_device_health_status_heartbeat{device=\"1\"} 101"));
  CHECK(Has(text, "neuron_device_host_memory_used_bytes{device=\"0\",category=\"tensors\"} 4096"));
  CHECK(Has(text, "neuron_device_power_utilization_ratio{device=\"0\"} 0.42"));
  CHECK(Has(text,
            "neuron_core_execution_status_total{device=\"1\",core=\"1\",status=\"failure\"} 1"));
  CHECK(Has(text,
            "neuron_core_execution_status_present{device=\"0\",core=\"0\",status=\"success\"} 2"));
  CHECK(
      Has(text, "neuron_core_memory_used_bytes{device=\"0\",core=\"1\",category=\"tensors\"} 50"));
  CHECK(
      Has(text, "neuron_core_memory_peak_bytes{device=\"0\",core=\"1\",category=\"tensors\"} 80"));
  CHECK(Has(text,
            "neuron_core_memory_total_bytes{device=\"0\",core=\"1\",category=\"tensors\"} 100"));
  CHECK(Has(text, "neuron_core_flops_total{device=\"0\",core=\"0\"} 7"));
  // nc_time_in_use is microseconds; the family is seconds.
  CHECK(Has(text, "neuron_core_busy_seconds_total{device=\"1\",core=\"0\"} 2.5"));
  CHECK(Has(text,
            "neuron_core_other_info_total{device=\"0\",core=\"0\",name=\"brand_new_counter\"} 1"));
  const absl::Status promtool = testing::PromtoolCheck(text);
  INFO(promtool.message());
  CHECK(promtool.ok());
}

TEST_CASE("a vanished or unknown device is reported without its counters", "[agent]") {
  inventory::Inventory inv = TwoDevices();
  inv.devices[1].present = false;
  inv.devices[1].healthy = false;
  inv.devices[1].unhealthy_reason = "vanished";
  inv.devices[0].model.reset();
  inv.devices[0].pci_device_id = 0x1234;
  const std::string text = Render(inv);
  CHECK(Has(text, "neuron_node_devices 1"));
  CHECK(Has(text, "neuron_device_healthy{device=\"1\"} 0"));
  CHECK(text.find("neuron_core_flops_total{device=\"1\"") == std::string::npos);
  CHECK(text.find("device_id=\"1234\",family=\"unknown\"") != std::string::npos);
  CHECK(testing::PromtoolCheck(text).ok());
}

TEST_CASE("trn2 at LNC 2: logical node cores, per-core series per physical core", "[agent]") {
  inventory::Inventory inv;
  inventory::Device d;
  d.model = topology::ModelForPciDevice(0x7364);
  d.pci_device_id = 0x7364;
  d.physical_cores = 8;
  d.core_count = 4;
  for (int c = 0; c < 8; ++c) {
    inventory::CoreStats core;
    core.index = c;
    core.other_info = {{"flop_count", 1}};
    d.cores.push_back(core);
  }
  inv.devices.push_back(d);
  inv.total_cores = 4;
  inv.total_physical_cores = 8;
  inv.lnc = 2;
  inv.lnc_source = "file";
  const std::string text = Render(inv);
  CHECK(Has(text, "neuron_node_cores 4"));
  CHECK(Has(text, "neuron_node_physical_cores 8"));
  CHECK(Has(text, "neuron_node_lnc{source=\"file\"} 2"));
  CHECK(Has(text, "neuron_core_flops_total{device=\"0\",core=\"7\"} 1"));  // neuron_core7
  CHECK(testing::PromtoolCheck(text).ok());
}

TEST_CASE("an unreadable LNC withholds the logical core count", "[agent]") {
  inventory::Inventory inv = TwoDevices();
  inv.lnc = 0;
  inv.total_cores = 0;
  inv.lnc_error = "NEURON_LOGICAL_NC_CONFIG: not an LNC value";
  const std::string text = Render(inv);
  CHECK(text.find("\nneuron_node_cores ") == std::string::npos);
  CHECK(text.find("\nneuron_node_lnc{") == std::string::npos);
  CHECK(Has(text, "neuron_node_lnc_valid 0"));
  CHECK(Has(text, "neuron_node_physical_cores 4"));
  CHECK(testing::PromtoolCheck(text).ok());
}

TEST_CASE("an empty node still exposes its zero gauges", "[agent]") {
  inventory::Inventory empty;
  empty.lnc = 1;  // what a scan of a node without devices resolves
  const std::string text = Render(empty);
  CHECK(Has(text, "neuron_node_devices 0"));
  CHECK(Has(text, "neuron_node_cores 0"));
  CHECK(Has(text, "neuron_node_physical_cores 0"));
  CHECK(text.find("neuron_device_info") == std::string::npos);
  CHECK(testing::PromtoolCheck(text).ok());
}

}  // namespace
}  // namespace neuron::agent

namespace neuron::agent {
namespace {

TEST_CASE("neuron_ultraserver_info carries the node's UltraServer identity", "[agent]") {
  inventory::Inventory inv = TwoDevices();
  CHECK(Render(inv).find("neuron_ultraserver_info") == std::string::npos);
  ultraserver::Identity id;
  id.modes = {1, 2, 4};
  id.server_id_4 = "bog79p1y8tetj5uu";
  id.node_id_4 = 3;
  id.server_id_2 = "ygml2651y0lwdd46";
  id.node_id_2 = 1;
  inv.ultraserver = id;
  std::string text = Render(inv);
  CHECK(Has(text,
            "neuron_ultraserver_info{modes=\"1_2_4\",server_id_4=\"bog79p1y8tetj5uu\","
            "node_id_4=\"3\",server_id_2=\"ygml2651y0lwdd46\",node_id_2=\"1\"} 1"));
  const absl::Status promtool = testing::PromtoolCheck(text);
  INFO(promtool.message());
  CHECK(promtool.ok());

  inv.ultraserver->modes = {4};  // X1 only: no sets of 2 or 4, their ids are empty
  text = Render(inv);
  CHECK(Has(text,
            "neuron_ultraserver_info{modes=\"4\",server_id_4=\"\",node_id_4=\"\",server_id_2=\"\","
            "node_id_2=\"\"} 1"));
  CHECK(testing::PromtoolCheck(text).ok());
}

}  // namespace
}  // namespace neuron::agent
