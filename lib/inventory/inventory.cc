// File: lib/inventory/inventory.cc
#include "lib/inventory/inventory.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/sysfs/driver_layout.h"
#include "lib/sysfs/neuron_driver.h"
#include "lib/sysfs/parsers.h"
#include "spdlog/spdlog.h"

namespace neuron::inventory {

namespace sf = neuron::sysfs;

// Reads and parses one file, counting failures in the scanner.
struct Scanner::Reader {
  Scanner& s;

  template <typename Parse>
  auto Read(const std::string& path, Parse parse)
      -> std::optional<typename decltype(parse(absl::string_view()))::value_type> {
    auto text = s.fs_.ReadFile(path);
    if (!text.ok()) {
      s.ReportError(path, text.status());
      return std::nullopt;
    }
    auto v = parse(absl::string_view(*text));
    if (!v.ok()) {
      s.ReportError(path, v.status());
      return std::nullopt;
    }
    return *std::move(v);
  }

  // Like Read, but a missing file is normal (attributes only some driver versions publish).
  template <typename Parse>
  auto ReadOptional(const std::string& path, Parse parse)
      -> std::optional<typename decltype(parse(absl::string_view()))::value_type> {
    if (!s.fs_.Exists(path)) return std::nullopt;
    return Read(path, parse);
  }

  // Entries of a counter directory; a missing directory is an error.
  std::vector<std::string> List(const std::string& dir) {
    auto names = s.fs_.ListDir(dir);
    if (!names.ok()) {
      s.ReportError(dir, names.status());
      return {};
    }
    return *std::move(names);
  }

  std::optional<uint64_t> U64(const std::string& path) { return Read(path, sf::ParseU64); }

  std::optional<std::string> Token(const std::string& path) { return Read(path, sf::ParseToken); }
};

Scanner::Scanner(const sysfs::Fs& fs, ScanOptions opts) : fs_(fs), opts_(std::move(opts)) {}

void Scanner::ReportError(const std::string& path, const absl::Status& s) {
  ++read_errors_;
  if (warned_.insert(path).second) {
    spdlog::warn(
        "sysfs read failed path={} error=\"{}\" (further failures of this file are "
        "counted, not logged)",
        path, std::string(s.message()));
  }
}

namespace {

CoreStats ReadCore(Scanner::Reader& r, const std::string& dir, int index) {
  CoreStats c;
  c.index = index;
  if (auto a = r.Token(dir + "/info/architecture/arch_type")) c.arch_type = *a;
  const std::string status = dir + "/stats/status";
  for (const std::string& name : r.List(status)) {
    if (auto v = r.U64(absl::StrCat(status, "/", name, "/total"))) c.status_total[name] = *v;
    if (auto v = r.U64(absl::StrCat(status, "/", name, "/present"))) c.status_present[name] = *v;
  }
  const std::string mem = dir + "/stats/memory_usage/device_mem";
  for (const std::string& cat : r.List(mem)) {
    if (cat == "total" || cat == "present" || cat == "peak") continue;  // the core's own sums
    const std::string base = absl::StrCat(mem, "/", cat);
    auto total = r.U64(base + "/total");
    auto present = r.U64(base + "/present");
    auto peak = r.U64(base + "/peak");
    if (total && present && peak) c.device_mem[cat] = MemoryStat{*total, *present, *peak};
  }
  const std::string other = dir + "/stats/other_info";
  for (const std::string& name : r.List(other)) {
    if (auto v = r.U64(absl::StrCat(other, "/", name, "/total"))) c.other_info[name] = *v;
  }
  return c;
}

}  // namespace

absl::StatusOr<Inventory> Scanner::Scan(bool rescan_pci) {
  Reader r{*this};
  auto indices = sf::ListNeuronDeviceIndices(fs_);
  if (!indices.ok()) {
    ReportError(sf::kNeuronClassDir, indices.status());
    return indices.status();
  }
  RefreshPci(*indices, rescan_pci);

  Inventory inv;
  inv.node_name = opts_.node_name;
  if (fs_.Exists(sf::kNeuronModuleVersion)) {  // absent when the driver sets no MODULE_VERSION
    if (auto v = r.Token(sf::kNeuronModuleVersion)) inv.driver_version = *v;
  }
  sf::DriverLayout layout_seen = sf::DriverLayout::kCurrent;
  for (int index : *indices) {
    std::optional<Device> d = ReadDevice(r, index, layout_seen, inv);
    if (!d) continue;
    inv.total_physical_cores += d->physical_cores;
    inv.devices.push_back(*std::move(d));
  }
  ApplyLnc(inv);
  inv.instance_type = ResolveInstanceType(inv);
  inv.read_errors = read_errors_;
  return inv;
}

void Scanner::RefreshPci(const std::vector<int>& indices, bool rescan_pci) {
  if (have_pci_ && !rescan_pci && indices == last_indices_) return;
  auto pci = sf::ListNeuronPciDevices(fs_);
  if (pci.ok()) {
    pci_ = *std::move(pci);
    have_pci_ = true;
  } else if (absl::IsNotFound(pci.status())) {
    pci_.clear();  // no PCI bus visible at this root: driver data only
    have_pci_ = true;
    if (warned_.insert("sys/bus/pci").second) {
      spdlog::warn("no PCI bus under host root, PCI identity unknown error=\"{}\"",
                   std::string(pci.status().message()));
    }
  } else {
    ReportError("sys/bus/pci", pci.status());
    have_pci_ = false;  // keep the previous list, retry next scan
  }
  pci_of_index_ = sf::MapDevicesToPci(fs_, indices, pci_);
  last_indices_ = indices;
}

std::optional<Device> Scanner::ReadDevice(Reader& r, int index, sf::DriverLayout& layout_seen,
                                          Inventory& inv) {
  const std::string dir = sf::NeuronDeviceDir(index);
  const std::optional<sf::DriverLayout> detected = sf::DetectDriverLayout(fs_, index);
  if (!detected && !fs_.Exists(dir)) return std::nullopt;  // vanished since the listing
  // A device missing its core_count is read like its neighbours.
  const sf::DriverLayout layout = detected.value_or(layout_seen);
  layout_seen = layout;
  const auto at = [&](sf::DeviceAttr a) { return sf::DeviceAttrPath(layout, index, a); };
  Device d;
  d.index = index;
  if (detected) d.driver_layout = sf::DriverLayoutName(*detected);
  if (auto cc = r.Read(at(sf::DeviceAttr::kCoreCount), sf::ParseCoreCount)) {
    d.physical_cores = *cc;
  }
  if (auto links = r.Read(at(sf::DeviceAttr::kConnectedDevices), sf::ParseConnectedDevices)) {
    d.connected = *links;
  }
  FillPciIdentity(d);
  if (auto a = r.Token(dir + "/info/architecture/arch_type")) d.arch_type = *a;
  if (auto a = r.Token(dir + "/info/architecture/device_name")) d.device_name = *a;
  if (auto a = r.Token(dir + "/info/architecture/instance_type")) {
    if (inv.driver_instance_type.empty()) inv.driver_instance_type = *a;
  }
  if (fs_.Exists(dir + "/info/serial_number")) {
    // The driver prints an empty line when the firmware read fails: not an error of ours.
    auto sn = fs_.ReadFile(dir + "/info/serial_number");
    if (sn.ok()) {
      if (auto t = sf::ParseToken(*sn); t.ok()) d.serial_number = *t;
    }
  }
  const std::string hw = at(sf::DeviceAttr::kHardwareDir);
  for (const std::string& name : r.List(hw)) {
    if (auto v = r.U64(absl::StrCat(hw, "/", name))) d.hardware[name] = *v;
  }
  const std::string host = at(sf::DeviceAttr::kHostMemDir);
  for (const std::string& cat : r.List(host)) {
    if (auto v = r.U64(absl::StrCat(host, "/", cat, "/present"))) d.host_mem[cat] = *v;
  }
  if (auto p = r.ReadOptional(at(sf::DeviceAttr::kPowerUtilization), sf::ParsePowerUtilization)) {
    if (p->valid) d.power_utilization = p->avg;
  }
  auto cores = sf::ListNeuronCoreIndices(fs_, index);
  if (!cores.ok()) {
    ReportError(dir, cores.status());
  } else {
    for (int c : *cores) d.cores.push_back(ReadCore(r, sf::NeuronCoreDir(index, c), c));
  }
  return d;
}

void Scanner::FillPciIdentity(Device& d) const {
  auto it = pci_of_index_.find(d.index);
  if (it == pci_of_index_.end()) return;
  d.pci_address = it->second;
  for (const sf::PciDevice& p : pci_) {
    if (p.address != d.pci_address) continue;
    d.pci_device_id = p.device_id;
    d.numa_node = p.numa_node;
    d.driver = p.driver;
  }
  d.model = topology::ModelForPciDevice(d.pci_device_id);
}

std::string Scanner::ResolveInstanceType(const Inventory& inv) const {
  if (!opts_.instance_type.empty()) return opts_.instance_type;
  // EC2 publishes the instance type as the DMI product name.
  auto dmi = fs_.ReadFile("sys/devices/virtual/dmi/id/product_name");
  if (dmi.ok()) {
    if (auto t = sf::ParseToken(*dmi); t.ok() && topology::FindShape(*t) != nullptr) return *t;
  }
  if (inv.devices.empty() || !inv.devices[0].model) return "";
  const topology::Family family = inv.devices[0].model->family;
  const topology::Shape* match = nullptr;
  int matches = 0;
  for (const topology::Shape& s : topology::AllShapes()) {
    if (s.family == family && s.devices == static_cast<int>(inv.devices.size())) {
      match = &s;
      ++matches;
    }
  }
  return matches == 1 ? match->instance_type : "";
}

void Scanner::ApplyLnc(Inventory& inv) {
  std::optional<topology::DeviceModel> model;
  for (const Device& d : inv.devices) {
    if (d.model) {
      model = d.model;
      break;
    }
  }
  absl::StatusOr<LncSetting> lnc = ResolveLnc(fs_, opts_.lnc, model);
  if (!lnc.ok()) {
    inv.lnc_error = std::string(lnc.status().message());
    if (inv.lnc_error != last_lnc_error_) {
      spdlog::error("LNC unreadable, logical NeuronCore counts withheld error=\"{}\"",
                    inv.lnc_error);
      last_lnc_error_ = inv.lnc_error;
    }
    return;
  }
  if (!last_lnc_error_.empty()) {
    spdlog::info("LNC readable again lnc={} source={}", lnc->value, lnc->origin);
    last_lnc_error_.clear();
  }
  inv.lnc = lnc->value;
  inv.lnc_source = LncSourceName(lnc->source);
  inv.lnc_origin = lnc->origin;
  for (Device& d : inv.devices) {
    d.core_count = d.physical_cores / inv.lnc;
    inv.total_cores += d.core_count;
  }
}

absl::StatusOr<Inventory> ReadInventory(const sysfs::Fs& fs, ScanOptions opts) {
  return Scanner(fs, std::move(opts)).Scan();
}

}  // namespace neuron::inventory
