#include "lib/agent/collector.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/metrics/exposition.h"
#include "lib/sysfs/device_leaves.h"

namespace neuron::agent {
namespace {

using metrics::FamilyBuilder;
using prometheus::MetricType;

// stats/other_info/<name> -> family. Names the driver may add later fall into
// neuron_core_other_info_total{name=...} rather than being dropped.
struct OtherInfoName {
  const char* driver_name;
  const char* family;
  const char* help;
  double scale = 1;  // driver value * scale = exported value (to the family's base unit)
};
constexpr OtherInfoName kOtherInfo[] = {
    {"flop_count", "neuron_core_flops_total",
     "Floating point operations executed (driver flop_count)."},
    {"inference_count", "neuron_core_inferences_total",
     "Executions completed (driver inference_count)."},
    {"model_load_count", "neuron_core_model_loads_total",
     "Models loaded (driver model_load_count)."},
    {"reset_req_count", "neuron_core_reset_requests_total",
     "Core resets requested (driver reset_req_count)."},
    {"reset_fail_count", "neuron_core_reset_failures_total",
     "Core resets that failed (driver reset_fail_count)."},
    // Busy time: the Neuron sysfs user guide gives nc_time_in_use in microseconds of execution
    // on hardware; its `total` accumulates since the driver loaded (write-to-clear), so its rate
    // is the core's busy ratio. Exported in seconds, Prometheus' base unit, for exactly that:
    // rate(neuron_core_busy_seconds_total[w]) is the fraction of w the core was executing.
    {"nc_time_in_use", "neuron_core_busy_seconds_total",
     "Time the core spent executing on hardware (driver nc_time_in_use, microseconds, in "
     "seconds); its rate is the core's busy ratio.",
     1e-6},
};

std::string DeviceIdHex(uint16_t id) { return absl::StrFormat("%04x", id); }

void Push(std::vector<prometheus::MetricFamily>& out, FamilyBuilder& b) {
  if (!b.empty()) out.push_back(b.Build());
}

// neuron_ultraserver_info: the node's place in its UltraServer, as its node labels say it (an
// id is "" for a set size the node has no id for); absent on other nodes.
void AppendUltraServerFamily(const inventory::Inventory& inv,
                             std::vector<prometheus::MetricFamily>& out) {
  if (!inv.ultraserver) return;
  const ultraserver::Identity& id = *inv.ultraserver;
  const std::optional<ultraserver::SetMember> two = id.MemberOf(2), four = id.MemberOf(4);
  auto server = [](const std::optional<ultraserver::SetMember>& m) {
    return m ? m->server_id : std::string();
  };
  auto node = [](const std::optional<ultraserver::SetMember>& m) {
    return m ? absl::StrCat(m->node_id) : std::string();
  };
  FamilyBuilder info("neuron_ultraserver_info",
                     "The node's UltraServer identity from the Neuron driver (modes it supports, "
                     "server and node ids of its sets of 4 and 2); absent outside UltraServers.",
                     MetricType::Gauge);
  info.Add({{"modes", ultraserver::ModesLabelValue(id.modes)},
            {"server_id_4", server(four)},
            {"node_id_4", node(four)},
            {"server_id_2", server(two)},
            {"node_id_2", node(two)}},
           1);
  Push(out, info);
}

void AppendNodeFamilies(const inventory::Inventory& inv,
                        std::vector<prometheus::MetricFamily>& out) {
  int present_devices = 0;
  for (const auto& d : inv.devices) present_devices += d.present ? 1 : 0;

  FamilyBuilder devices("neuron_node_devices", "Neuron devices present on the node.",
                        MetricType::Gauge);
  devices.Add({}, present_devices);
  Push(out, devices);
  // Logical cores (physical / LNC); absent while LNC is unreadable rather than wrong.
  FamilyBuilder cores("neuron_node_cores",
                      "Logical NeuronCores on the node (physical cores / LNC).", MetricType::Gauge);
  if (inv.lnc > 0) cores.Add({}, inv.total_cores);
  Push(out, cores);
  FamilyBuilder physical("neuron_node_physical_cores",
                         "Physical NeuronCores on the node (the driver's core_count).",
                         MetricType::Gauge);
  physical.Add({}, inv.total_physical_cores);
  Push(out, physical);
  FamilyBuilder lnc("neuron_node_lnc",
                    "Logical NeuronCore config in effect, by where it was read (flag, env, file, "
                    "default); absent while unreadable.",
                    MetricType::Gauge);
  if (inv.lnc > 0) lnc.Add({{"source", inv.lnc_source}}, inv.lnc);
  Push(out, lnc);
  FamilyBuilder lnc_ok("neuron_node_lnc_valid",
                       "1 when the LNC setting was readable and valid, 0 otherwise.",
                       MetricType::Gauge);
  lnc_ok.Add({}, inv.lnc > 0 ? 1 : 0);
  Push(out, lnc_ok);
  FamilyBuilder read_errors("neuron_agent_sysfs_read_errors_total",
                            "Sysfs reads that failed or held garbled values.", MetricType::Counter);
  read_errors.Add({}, static_cast<double>(inv.read_errors));
  Push(out, read_errors);
  AppendUltraServerFamily(inv, out);
}

// The per-device and per-core families, filled device by device.
class DeviceFamilies {
 public:
  DeviceFamilies() {
    for (const auto& o : kOtherInfo) other_.emplace_back(o.family, o.help, MetricType::Counter);
  }

  void Add(const inventory::Device& d) {
    const std::string dev = std::to_string(d.index);
    info_.Add({{"device", dev},
               {"pci_address", d.pci_address},
               {"device_id", DeviceIdHex(d.pci_device_id)},
               {"family", d.model ? topology::FamilyName(d.model->family) : "unknown"}},
              1);
    healthy_.Add({{"device", dev}}, d.healthy ? 1 : 0);
    if (!d.present) return;
    for (const auto& [name, v] : d.hardware) {
      hardware_.Add({{"device", dev}, {"counter", name}}, static_cast<double>(v));
    }
    for (const auto& [name, v] : d.health_status) {
      if (name == sysfs::leaf::kHealthcheckHeartbeat) {
        heartbeat_.Add({{"device", dev}}, static_cast<double>(v));
      } else {
        health_status_.Add({{"device", dev}, {"counter", name}}, static_cast<double>(v));
      }
    }
    for (const auto& [cat, v] : d.host_mem) {
      host_mem_.Add({{"device", dev}, {"category", cat}}, static_cast<double>(v));
    }
    if (d.power_utilization) power_.Add({{"device", dev}}, *d.power_utilization / 100.0);
    for (const auto& c : d.cores) AddCore(dev, c);
  }

  void AppendTo(std::vector<prometheus::MetricFamily>& out) {
    for (FamilyBuilder* b :
         {&info_, &healthy_, &hardware_, &health_status_, &heartbeat_, &host_mem_, &power_,
          &status_total_, &status_present_, &mem_used_, &mem_peak_, &mem_total_, &other_unknown_}) {
      Push(out, *b);
    }
    for (auto& b : other_) Push(out, b);
  }

 private:
  // Per neuron_coreM directory, i.e. per PHYSICAL core; `core` is M.
  void AddCore(const std::string& dev, const inventory::CoreStats& c) {
    const std::string core = std::to_string(c.index);
    for (const auto& [s, v] : c.status_total) {
      status_total_.Add({{"device", dev}, {"core", core}, {"status", s}}, static_cast<double>(v));
    }
    for (const auto& [s, v] : c.status_present) {
      status_present_.Add({{"device", dev}, {"core", core}, {"status", s}}, static_cast<double>(v));
    }
    for (const auto& [cat, m] : c.device_mem) {
      mem_used_.Add({{"device", dev}, {"core", core}, {"category", cat}},
                    static_cast<double>(m.present));
      mem_peak_.Add({{"device", dev}, {"core", core}, {"category", cat}},
                    static_cast<double>(m.peak));
      mem_total_.Add({{"device", dev}, {"core", core}, {"category", cat}},
                     static_cast<double>(m.total));
    }
    for (const auto& [name, v] : c.other_info) {
      bool known = false;
      for (size_t i = 0; i < std::size(kOtherInfo); ++i) {
        if (name == kOtherInfo[i].driver_name) {
          other_[i].Add({{"device", dev}, {"core", core}},
                        static_cast<double>(v) * kOtherInfo[i].scale);
          known = true;
        }
      }
      if (!known) {
        other_unknown_.Add({{"device", dev}, {"core", core}, {"name", name}},
                           static_cast<double>(v));
      }
    }
  }

  FamilyBuilder info_{"neuron_device_info",
                      "Static facts about each Neuron device (value is always 1).",
                      MetricType::Gauge};
  FamilyBuilder healthy_{
      "neuron_device_healthy",
      "1 when the device is present, bound and free of new uncorrectable errors.",
      MetricType::Gauge};
  FamilyBuilder hardware_{"neuron_device_hardware_errors_total",
                          "Hardware error counters of the device (stats/hardware).",
                          MetricType::Counter};
  FamilyBuilder health_status_{
      "neuron_device_health_status_errors_total",
      "Error counts of the driver's own health status (stats/hardware/health_status, 2.28+).",
      MetricType::Counter};
  FamilyBuilder heartbeat_{"neuron_device_health_status_heartbeat",
                           "The driver health check's heartbeat value (2.30+); it should move.",
                           MetricType::Gauge};
  FamilyBuilder host_mem_{"neuron_device_host_memory_used_bytes",
                          "Host memory used for the device, by category.", MetricType::Gauge};
  FamilyBuilder power_{"neuron_device_power_utilization_ratio",
                       "Average power utilization over the driver's last minute (0-1).",
                       MetricType::Gauge};
  FamilyBuilder status_total_{
      "neuron_core_execution_status_total",
      "Executions by outcome since the driver loaded (stats/status/*/total).", MetricType::Counter};
  FamilyBuilder status_present_{"neuron_core_execution_status_present",
                                "Driver 'present' value of each execution outcome counter.",
                                MetricType::Gauge};
  FamilyBuilder mem_used_{"neuron_core_memory_used_bytes",
                          "Device memory in use by the core, by category.", MetricType::Gauge};
  FamilyBuilder mem_peak_{"neuron_core_memory_peak_bytes",
                          "Peak device memory used by the core, by category.", MetricType::Gauge};
  FamilyBuilder mem_total_{"neuron_core_memory_total_bytes",
                           "Driver 'total' figure of device memory, by category.",
                           MetricType::Gauge};
  FamilyBuilder other_unknown_{"neuron_core_other_info_total",
                               "Other driver counters of the core (stats/other_info).",
                               MetricType::Counter};
  std::vector<FamilyBuilder> other_;  // one per kOtherInfo entry, in its order
};

}  // namespace

InventoryCollector::InventoryCollector(std::function<inventory::Inventory()> snapshot)
    : snapshot_(std::move(snapshot)) {}

std::vector<prometheus::MetricFamily> InventoryCollector::Collect() const {
  return InventoryFamilies(snapshot_());
}

std::vector<prometheus::MetricFamily> InventoryFamilies(const inventory::Inventory& inv) {
  std::vector<prometheus::MetricFamily> out;
  AppendNodeFamilies(inv, out);
  DeviceFamilies devices;
  for (const auto& d : inv.devices) devices.Add(d);
  devices.AppendTo(out);
  return out;
}

}  // namespace neuron::agent
