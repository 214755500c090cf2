// File: lib/extender/node.cc
#include "lib/extender/node.h"

#include <map>
#include <mutex>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/assignment/ids.h"
#include "lib/base/json_access.h"
#include "lib/ultraserver/labels.h"

namespace neuron::extender {
namespace {

using nlohmann::json;

int64_t Count(const json* list, const char* resource) {
  const json* q = list ? Member(*list, resource) : nullptr;
  if (!q) return -1;
  int64_t n = -1;
  if (q->is_number_integer()) return q->get<int64_t>();
  if (q->is_string() && absl::SimpleAtoi(q->get<std::string>(), &n)) return n;
  return -1;
}

std::shared_ptr<ShapeModel> Build(std::string name, topology::NodeTopology topo, int lnc) {
  auto m = std::make_shared<ShapeModel>();
  m->name = std::move(name);
  m->topo = std::move(topo);
  m->lnc = lnc;
  const int devices = m->topo.devices;
  const int cores = m->total_cores();
  m->device_counts.assign(devices + 1, false);
  m->core_counts.assign(cores + 1, false);
  const std::vector<bool> all_dev(devices, true), all_core(cores, true);
  for (int k = 1; k <= devices; ++k) {
    m->device_counts[k] = topology::ChooseDevices(m->topo, all_dev, k).has_value();
  }
  for (int k = 1; k <= cores; ++k) {
    m->core_counts[k] = topology::ChooseCores(m->topo, all_core, k).has_value();
  }
  return m;
}

std::mutex g_models_mu;
std::map<std::pair<std::string, int>, std::shared_ptr<const ShapeModel>>& Models() {
  static auto* m = new std::map<std::pair<std::string, int>, std::shared_ptr<const ShapeModel>>;
  return *m;
}

// A node whose links are unknown: devices 0..n-1 as a chain (only contiguous windows, as AWS's
// own scheduler allocates), so we never promise a set that the hardware may not link.
std::shared_ptr<const ShapeModel> ChainModel(int devices, int cores_per_device) {
  const std::string key = absl::StrCat("chain:", devices);
  std::lock_guard<std::mutex> lock(g_models_mu);
  auto& slot = Models()[{key, cores_per_device}];
  if (!slot) {
    std::vector<std::vector<int>> links(devices);
    for (int d = 0; d + 1 < devices; ++d) {
      links[d].push_back(d + 1);
      links[d + 1].push_back(d);
    }
    topology::NodeTopology t = topology::TopologyFromLinks(topology::Family::kInferentia2,
                                                           cores_per_device, std::move(links));
    slot = Build(absl::StrCat(devices, "-device node"), std::move(t), 0);
  }
  return slot;
}

}  // namespace

std::string ShapeModel::DeviceCountsText() const {
  std::vector<int> ks;
  for (int k = 1; k < static_cast<int>(device_counts.size()); ++k) {
    if (device_counts[k]) ks.push_back(k);
  }
  std::string out;
  for (size_t i = 0; i < ks.size(); ++i) {
    if (i > 0) out += i + 1 == ks.size() ? " or " : ", ";
    out += std::to_string(ks[i]);
  }
  return out;
}

std::shared_ptr<const ShapeModel> ModelFor(const topology::Shape& shape, int lnc) {
  std::lock_guard<std::mutex> lock(g_models_mu);
  auto& slot = Models()[{shape.instance_type, lnc}];
  if (!slot) {
    absl::StatusOr<topology::NodeTopology> t = topology::TopologyForShape(shape, lnc);
    if (!t.ok()) return nullptr;
    slot = Build(shape.instance_type, std::move(*t), lnc);
  }
  return slot;
}

namespace {

// The instance type a Node's labels name, well-known label first, then its beta twin, then
// NFD's; null when none names a known shape. `source` says which kind of label it was.
const topology::Shape* ShapeFromLabels(const json& labels, std::string& source) {
  const std::string nfd_type = std::string(kNfdPrefix) + "-instance-type";
  for (const auto& [label, from] :
       {std::pair<std::string, const char*>{kInstanceTypeLabel, "instance-type"},
        {kInstanceTypeBetaLabel, "instance-type"},
        {nfd_type, "nfd"}}) {
    const std::string t = StringMember(labels, label);
    if (t.empty()) continue;
    if (const topology::Shape* shape = topology::FindShape(t)) {
      source = from;
      return shape;
    }
  }
  return nullptr;
}

// The node's LNC: its label, else what the device plugin's capacity implies (it advertises
// physical cores / LNC per device), else 0 (the family's default).
int LncOf(const json& labels, const topology::Shape& shape, int64_t cap_devices,
          int64_t cap_cores) {
  int lnc = 0;
  if (std::string l = StringMember(labels, kLncLabel); !l.empty()) {
    return absl::SimpleAtoi(l, &lnc) ? lnc : 0;
  }
  if (cap_cores <= 0 || cap_devices != shape.devices) return 0;
  std::optional<topology::DeviceModel> dm = topology::ModelForPciDevice(shape.pci_device_id);
  if (!dm || !dm->lnc_capable) return 0;
  const int64_t physical = int64_t{dm->physical_cores} * shape.devices;
  if (cap_cores * 2 == physical) return 2;
  if (cap_cores == physical) return 1;
  return 0;
}

// A node of no known shape: a chain of devices counted from the NFD labels, else from what
// the device plugin advertises; null (and `source` cleared) when neither says.
std::shared_ptr<const ShapeModel> ChainFromCounts(const json& labels, int64_t cap_devices,
                                                  int64_t cap_cores, std::string& source) {
  const std::string nfd = kNfdPrefix;
  int64_t devices = -1, cores = -1;
  if (absl::SimpleAtoi(StringMember(labels, nfd + "-device-count"), &devices) && devices > 0) {
    if (!absl::SimpleAtoi(StringMember(labels, nfd + "-core-count"), &cores)) cores = -1;
    source = "nfd";
  } else if (cap_devices > 0) {
    devices = cap_devices;
    cores = cap_cores;
    source = "capacity";
  }
  if (devices <= 0 || devices > topology::kMaxDevices) {
    source.clear();
    return nullptr;
  }
  // No Neuron device has more than 8 cores; anything else in a label is not to be trusted.
  const int64_t per = cores > 0 && cores % devices == 0 ? cores / devices : 1;
  const int cpd = per >= 1 && per <= 8 ? static_cast<int>(per) : 1;
  return ChainModel(static_cast<int>(devices), cpd);
}

// The identity AWS's UltraServer labels describe; null when they describe none.
std::shared_ptr<const ultraserver::Identity> UltraServerOf(const json& labels) {
  std::map<std::string, std::string> ours;
  for (const auto& [k, v] : labels.items()) {
    if (v.is_string() && k.rfind(ultraserver::kLabelPrefix, 0) == 0) {
      ours.emplace(k, v.get<std::string>());
    }
  }
  if (ours.empty()) {
    return nullptr;
  }
  std::optional<ultraserver::Identity> id = ultraserver::IdentityFromLabels(ours);
  if (!id) {
    return nullptr;
  }
  return std::make_shared<const ultraserver::Identity>(*std::move(id));
}

// Not cordoned, and Ready unless the node reports no Ready condition at all.
bool Schedulable(const json& node, const json* status) {
  const json* spec = Member(node, "spec");
  if (spec != nullptr && BoolOf(Member(*spec, "unschedulable"))) {
    return false;
  }
  const json* conds = status ? Member(*status, "conditions") : nullptr;
  if (conds == nullptr || !conds->is_array()) {
    return true;
  }
  for (const json& c : *conds) {
    if (c.is_object() && StringMember(c, "type") == "Ready") {
      return StringMember(c, "status") == "True";
    }
  }
  return true;
}

}  // namespace

bool NodeInfo::FullyAllocatable() const {
  if (!shape) {
    return false;
  }
  const bool devices_ok = alloc_devices < 0 || alloc_devices >= shape->topo.devices;
  const bool cores_ok = alloc_cores < 0 || alloc_cores >= shape->total_cores();
  return devices_ok && cores_ok && (alloc_devices >= 0 || alloc_cores >= 0);
}

NodeInfo ParseNode(const json& node) {
  NodeInfo info;
  static const json kEmpty = json::object();
  const json* md = Member(node, "metadata");
  if (const json* n = md ? Member(*md, "name") : nullptr; n && n->is_string()) {
    info.name = n->get<std::string>();
  }
  const json* labels_p = md ? Member(*md, "labels") : nullptr;
  const json& labels = labels_p && labels_p->is_object() ? *labels_p : kEmpty;
  const json* status = Member(node, "status");
  const json* alloc = status ? Member(*status, "allocatable") : nullptr;
  const json* cap = status ? Member(*status, "capacity") : nullptr;
  info.alloc_devices = Count(alloc, assignment::kNeuronResource);
  info.alloc_cores = Count(alloc, assignment::kNeuronCoreResource);
  const int64_t cap_devices = Count(cap ? cap : alloc, assignment::kNeuronResource);
  const int64_t cap_cores = Count(cap ? cap : alloc, assignment::kNeuronCoreResource);
  info.ultraserver = UltraServerOf(labels);
  if (info.ultraserver) {
    const ultraserver::Identity& id = *info.ultraserver;
    for (int size : ultraserver::kSetSizes) {
      if (id.ModeForSize(size) != ultraserver::Mode::kUnset) {
        info.us_sizes |= static_cast<uint8_t>(1U << size);
      }
    }
    info.us_node_id2 = static_cast<int8_t>(id.trn3 ? id.node_id : id.node_id_2);
    info.us_node_id4 = static_cast<int8_t>(id.trn3 ? id.node_id : id.node_id_4);
  }
  info.schedulable = Schedulable(node, status);

  if (const topology::Shape* shape = ShapeFromLabels(labels, info.source)) {
    info.shape = ModelFor(*shape, LncOf(labels, *shape, cap_devices, cap_cores));
    if (!info.shape) info.shape = ModelFor(*shape, 0);
    return info;
  }
  info.shape = ChainFromCounts(labels, cap_devices, cap_cores, info.source);
  return info;
}

const JsonKeep& NodeFields() {
  static const JsonKeep* keep = [] {
    const JsonKeep ours =
        JsonKeep::Of({{assignment::kNeuronResource, {}}, {assignment::kNeuronCoreResource, {}}});
    JsonKeep labels = JsonKeep::Of({{kInstanceTypeLabel},
                                    {kInstanceTypeBetaLabel},
                                    JsonKeep::Member::Prefix(kNfdPrefix),
                                    JsonKeep::Member::Prefix(ultraserver::kLabelPrefix)});
    const JsonKeep condition = JsonKeep::Of({{"type", {}}, {"status", {}}});
    auto* k = new JsonKeep(JsonKeep::Of({
        {"metadata",
         JsonKeep::Of(
             {{"name", {}}, {"uid", {}}, {"resourceVersion", {}}, {"labels", std::move(labels)}})},
        {"spec", JsonKeep::Of({{"unschedulable", {}}})},
        {"status", JsonKeep::Of({{"allocatable", ours},
                                 {"capacity", ours},
                                 {"conditions", JsonKeep::EachItem(condition)}})},
    }));
    return k;
  }();
  return *keep;
}

}  // namespace neuron::extender
