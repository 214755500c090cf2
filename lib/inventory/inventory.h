// File: lib/inventory/inventory.h
// A snapshot of the Neuron devices of one node: PCI identity (libpci), driver attributes and
// counters (sysfs), model facts (lib/topology). Built by a Scanner, which keeps what must
// survive between scans: the PCI list (re-read only when the device set changes), the
// index -> PCI address map, the cumulative read-error count and the once-per-file warnings.
//
//   auto fs = sysfs::MakeRootedFs("/");
//   inventory::Scanner scanner(*fs);
//   absl::StatusOr<inventory::Inventory> inv = scanner.Scan();
//
// Missing, empty or garbled attribute files never fail a scan: they count in read_errors and
// are logged once per file (spdlog warn), and the value is left out. A device that vanishes
// mid-scan is simply not in the snapshot.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/inventory/lnc.h"
#include "lib/sysfs/device_leaves.h"
#include "lib/sysfs/fs.h"
#include "lib/sysfs/pci.h"
#include "lib/topology/topology.h"
#include "lib/ultraserver/identity.h"

namespace neuron::inventory {

struct MemoryStat {
  uint64_t total = 0, present = 0, peak = 0;
};

struct CoreStats {
  int index = 0;                                        // core index on its device (neuron_core<M>)
  std::map<std::string, uint64_t> status_total = {};    // stats/status/<counter>/total
  std::map<std::string, uint64_t> status_present = {};  // stats/status/<counter>/present
  std::map<std::string, MemoryStat> device_mem = {};    // stats/memory_usage/device_mem/<category>
  std::map<std::string, uint64_t> other_info = {};      // stats/other_info/<name> (its total)
  std::string arch_type = {};                           // info/architecture/arch_type ("NCv2")
};

struct Device {
  int index = 0;                 // N of /dev/neuronN
  std::string pci_address = {};  // "0000:10:1c.0"; "" if it could not be paired
  uint16_t pci_device_id = 0;
  std::optional<topology::DeviceModel> model = {};  // nullopt = unknown id
  int physical_cores = 0;           // driver core_count: PHYSICAL cores (blind to LNC)
  int core_count = 0;               // LOGICAL cores = physical_cores / LNC; 0 while LNC is unknown
  std::vector<int> connected = {};  // driver connected_devices
  int numa_node = -1;
  bool healthy = true;
  std::string unhealthy_reason = {};  // "" when healthy: "vanished", "driver unbound", ...
  std::map<std::string, uint64_t> hardware = {};  // stats/hardware/* (mem_ecc_uncorrected, ...)
  std::map<std::string, uint64_t> host_mem = {};  // stats/memory_usage/host_mem/<category> bytes
  std::optional<double> power_utilization =
      {};  // stats/power/utilization avg, percent (valid only)
  std::vector<CoreStats> cores = {};
  // Extras beyond the contract.
  std::string driver = {};       // PCI driver bound ("neuron-driver"); "" unbound
  std::string arch_type = {};    // info/architecture/arch_type ("NDv2")
  std::string device_name = {};  // info/architecture/device_name ("Trainium1")
  std::string serial_number = {};
  // Driver health status (stats/hardware/health_status, drivers 2.28+ when enabled): the leaf
  // name (sysfs/device_leaves.h) -> its value; empty when the driver does not publish it.
  std::map<std::string, uint64_t> health_status = {};
  // What the driver's unhealthy_components lists ("" = nothing, or not published).
  std::string unhealthy_components = {};
  // Where each device-level leaf was found, relative to neuronN/ (leaf name -> path).
  std::map<std::string, std::string> sysfs_paths = {};
  bool present = true;  // false: kept in the snapshot only to report it unhealthy (watcher)
};

struct Inventory {
  std::string node_name = {};
  std::string instance_type = {};    // EC2 instance type; "" unknown (see Scanner::Scan)
  std::vector<Device> devices = {};  // sorted by index
  int total_cores = 0;               // sum of core_count (logical; 0 while LNC is unknown)
  int total_physical_cores = 0;      // sum of physical_cores
  uint64_t read_errors = 0;          // cumulative count of failed/garbled sysfs reads
  // LNC (lnc.h). lnc == 0: the value could not be resolved (lnc_error says why, naming its
  // source); logical core counts are then withheld (0), since a wrong count is worse than none.
  int lnc = 0;
  std::string lnc_source = {};  // "flag", "env", "file", "default"
  std::string lnc_origin = {};  // "--lnc", "NEURON_LOGICAL_NC_CONFIG", the file path, "default..."
  std::string lnc_error = {};
  // Extras beyond the contract.
  std::string driver_instance_type = {};  // raw driver info/architecture/instance_type ("Trn1")
  std::string driver_version = {};        // sys/module/neuron/version ("2.24.7.0"); "" unknown
  // The node's UltraServer identity from the driver's class attributes (lib/ultraserver);
  // nullopt: not an UltraServer node, or its attributes are unreadable garbage. While the driver
  // is busy (its election) the previous scan's identity is kept, never guessed.
  std::optional<ultraserver::Identity> ultraserver = {};
};

struct ScanOptions {
  std::string node_name = {};
  // Known instance type (flag/label/--emulate); wins over detection when non-empty.
  std::string instance_type = {};
  LncInputs lnc = {};  // --lnc and NEURON_LOGICAL_NC_CONFIG; the host file is read per scan
};

class Scanner {
 public:
  explicit Scanner(const sysfs::Fs& fs, ScanOptions opts = {});

  // One scan. Re-enumerates PCI (libpci) on the first call, when `rescan_pci` is set, or when
  // the set of neuronN indices differs from the previous scan. instance_type is, in order:
  // opts.instance_type; sys/devices/virtual/dmi/id/product_name when it names a known shape;
  // the only shape of the devices' family with this device count; else "".
  // Fails (Unavailable/NotFound...) only when the device list itself cannot be read.
  absl::StatusOr<Inventory> Scan(bool rescan_pci = false);

  uint64_t read_errors() const { return read_errors_; }
  // The Neuron PCI functions of the last successful enumeration (bound or not).
  const std::vector<sysfs::PciDevice>& pci() const { return pci_; }
  // Counts one failed read; logs a warning the first time `path` fails.
  void ReportError(const std::string& path, const absl::Status& s);

  struct Reader;  // per-scan helper counting errors (inventory.cc)

 private:
  // Re-enumerates PCI and maps neuronN to PCI addresses when asked or when `indices` changed.
  void RefreshPci(const std::vector<int>& indices, bool rescan_pci);
  // neuronN as the driver shows it; nullopt if its directory vanished since the listing.
  std::optional<Device> ReadDevice(Reader& r, int index, Inventory& inv);
  // The path of a leaf read without Reader::Leaf (a directory, an optional value), checked to
  // still be there, else looked for again.
  std::optional<std::string> FindLeaf(int index, absl::string_view name);
  // The health_status leaves the driver publishes, into d.health_status/unhealthy_components.
  void ReadHealthStatus(Reader& r, int index, Device& d);
  // The PCI identity (address, device ID, NUMA node, bound driver) of neuronN, if known.
  void FillPciIdentity(Device& d) const;
  // opts.instance_type, else DMI's product name, else the only shape that fits the devices.
  std::string ResolveInstanceType(const Inventory& inv) const;
  // Resolves LNC (lnc.h) and fills the logical counts, or records why it cannot.
  void ApplyLnc(Inventory& inv);
  // inv.ultraserver from the class attributes: Unavailable keeps the last identity (logged once
  // per busy spell), any other error counts a read error and leaves none.
  void ReadUltraServer(Inventory& inv);

  const sysfs::Fs& fs_;
  ScanOptions opts_;
  sysfs::DeviceLeafLocator leaves_{fs_};
  bool have_pci_ = false;
  std::vector<int> last_indices_;
  std::vector<sysfs::PciDevice> pci_;
  std::map<int, std::string> pci_of_index_;
  uint64_t read_errors_ = 0;
  std::set<std::string> warned_;
  std::string last_lnc_error_;  // logged once per distinct error
  std::optional<ultraserver::Identity> last_ultraserver_;
  bool ultraserver_busy_ = false;  // the last read was Unavailable (logged once per spell)
};

// One-shot convenience: Scanner(fs, opts).Scan().
absl::StatusOr<Inventory> ReadInventory(const sysfs::Fs& fs, ScanOptions opts = {});

}  // namespace neuron::inventory
