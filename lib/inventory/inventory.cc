// File: lib/inventory/inventory.cc
#include "lib/inventory/inventory.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/sysfs/neuron_driver.h"
#include "lib/sysfs/parsers.h"
#include "lib/ultraserver/read_identity.h"
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

  // Device `index`'s leaf `name` (sysfs/device_leaves.h), wherever the driver put it. A read
  // failing at the remembered place searches again once. `required`: a missing leaf counts as
  // an error (else an older driver or a disabled feature simply lacks it).
  template <typename Parse>
  auto Leaf(int index, absl::string_view name, Parse parse, bool required)
      -> std::optional<typename decltype(parse(absl::string_view()))::value_type> {
    for (int attempt = 0; attempt < 2; ++attempt) {
      std::optional<std::string> path = s.leaves_.Find(index, name);
      if (!path) break;
      auto text = s.fs_.ReadFile(*path);
      if (!text.ok() && absl::IsNotFound(text.status()) && attempt == 0) {
        s.leaves_.Forget(index, name);  // moved (or gone): look again
        continue;
      }
      if (!text.ok()) {
        s.ReportError(*path, text.status());
        return std::nullopt;
      }
      auto v = parse(absl::string_view(*text));
      if (!v.ok()) {
        s.ReportError(*path, v.status());
        return std::nullopt;
      }
      return *std::move(v);
    }
    if (required) {
      s.ReportError(absl::StrCat(sf::NeuronDeviceDir(index), "/", name),
                    absl::NotFoundError("not found by name under the device directory"));
    }
    return std::nullopt;
  }

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
  for (int index : *indices) {
    std::optional<Device> d = ReadDevice(r, index, inv);
    if (!d) continue;
    inv.total_physical_cores += d->physical_cores;
    inv.devices.push_back(*std::move(d));
  }
  ApplyLnc(inv);
  ReadUltraServer(inv);
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

std::optional<Device> Scanner::ReadDevice(Reader& r, int index, Inventory& inv) {
  const std::string dir = sf::NeuronDeviceDir(index);
  if (!fs_.Exists(dir)) {  // vanished since the listing
    leaves_.ForgetDevice(index);
    return std::nullopt;
  }
  namespace leaf = sf::leaf;
  Device d;
  d.index = index;
  if (auto cc = r.Leaf(index, leaf::kCoreCount, sf::ParseCoreCount, true)) d.physical_cores = *cc;
  if (auto links = r.Leaf(index, leaf::kConnectedDevices, sf::ParseConnectedDevices, true)) {
    d.connected = *links;
  }
  FillPciIdentity(d);
  if (auto a = r.Leaf(index, leaf::kArchType, sf::ParseToken, true)) d.arch_type = *a;
  if (auto a = r.Leaf(index, leaf::kDeviceName, sf::ParseToken, true)) d.device_name = *a;
  if (auto a = r.Leaf(index, leaf::kInstanceType, sf::ParseToken, true)) {
    if (inv.driver_instance_type.empty()) inv.driver_instance_type = *a;
  }
  // Inferentia has no serial; the driver prints an empty line when the firmware read fails.
  if (auto sn = FindLeaf(index, leaf::kSerialNumber)) {
    if (auto text = fs_.ReadFile(*sn); text.ok()) {
      if (auto t = sf::ParseToken(*text); t.ok()) d.serial_number = *t;
    }
  }
  for (const std::string& name : sf::HardwareCounterNames()) {
    // The corrected counters came with driver 2.30; the uncorrected ones are always there.
    const bool required = absl::StrContains(name, "uncorrected");
    if (auto v = r.Leaf(index, name, sf::ParseU64, required)) d.hardware[name] = *v;
  }
  ReadHealthStatus(r, index, d);
  if (auto host = FindLeaf(index, leaf::kHostMem)) {
    for (const std::string& cat : r.List(*host)) {
      if (auto v = r.U64(absl::StrCat(*host, "/", cat, "/present"))) d.host_mem[cat] = *v;
    }
  } else {
    ReportError(absl::StrCat(dir, "/", leaf::kHostMem),
                absl::NotFoundError("not found by name under the device directory"));
  }
  if (auto p = r.Leaf(index, leaf::kPowerUtilization, sf::ParsePowerUtilization, false)) {
    if (p->valid) d.power_utilization = p->avg;
  }
  d.sysfs_paths = leaves_.Places(index);
  auto cores = sf::ListNeuronCoreIndices(fs_, index);
  if (!cores.ok()) {
    ReportError(dir, cores.status());
  } else {
    for (int c : *cores) d.cores.push_back(ReadCore(r, sf::NeuronCoreDir(index, c), c));
  }
  return d;
}

std::optional<std::string> Scanner::FindLeaf(int index, absl::string_view name) {
  std::optional<std::string> path = leaves_.Find(index, name);
  if (path && !fs_.Exists(*path)) {  // moved since it was found
    leaves_.Forget(index, name);
    path = leaves_.Find(index, name);
  }
  return path;
}

void Scanner::ReadHealthStatus(Reader& r, int index, Device& d) {
  namespace leaf = sf::leaf;
  for (const char* name :
       {leaf::kHbmEccErrCount, leaf::kRepairableHbmEccErrCount, leaf::kSramEccErrCount,
        leaf::kHwErrorEvent, leaf::kHealthcheckHeartbeat}) {
    if (auto v = r.Leaf(index, name, sf::ParseU64, false)) d.health_status[name] = *v;
  }
  if (auto u = r.Leaf(index, leaf::kUnhealthyComponents, sf::ParseUnhealthyComponents, false)) {
    d.unhealthy_components = *u;
  }
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

namespace {

void LogUltraServer(const std::optional<ultraserver::Identity>& id) {
  if (!id) {
    spdlog::info("UltraServer identity none (not an UltraServer node)");
  } else if (id->trn3) {
    spdlog::info("UltraServer identity modes={} reservation_id={} node_id={}",
                 ultraserver::ModesLabelValue(id->modes), id->reservation_id, id->node_id);
  } else {
    spdlog::info(
        "UltraServer identity modes={} server_id_4={} node_id_4={} server_id_2={} node_id_2={}",
        ultraserver::ModesLabelValue(id->modes), id->server_id_4, id->node_id_4, id->server_id_2,
        id->node_id_2);
  }
}

}  // namespace

void Scanner::ReadUltraServer(Inventory& inv) {
  absl::StatusOr<std::optional<ultraserver::Identity>> id = ultraserver::ReadIdentity(fs_);
  if (absl::IsUnavailable(id.status())) {
    if (!ultraserver_busy_) {
      spdlog::info("UltraServer identity unavailable, keeping the previous one error=\"{}\"",
                   std::string(id.status().message()));
      ultraserver_busy_ = true;
    }
    inv.ultraserver = last_ultraserver_;
    return;
  }
  ultraserver_busy_ = false;
  if (!id.ok()) {
    // The message starts with the file's path: one warning per file, every failure counted.
    const absl::string_view msg = id.status().message();
    ReportError(std::string(msg.substr(0, msg.find(": "))), id.status());
    last_ultraserver_.reset();
    return;
  }
  if (*id != last_ultraserver_) LogUltraServer(*id);
  last_ultraserver_ = *id;
  inv.ultraserver = *std::move(id);
}

absl::StatusOr<Inventory> ReadInventory(const sysfs::Fs& fs, ScanOptions opts) {
  return Scanner(fs, std::move(opts)).Scan();
}

}  // namespace neuron::inventory
