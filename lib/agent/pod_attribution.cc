// File: lib/agent/pod_attribution.cc
// PodResources List reply -> one row per allocated physical core (pod_attribution.h).
#include "lib/agent/pod_attribution.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/assignment/ids.h"
#include "lib/dra/claim_allocation.h"
#include "lib/dra/names.h"

namespace neuron::agent {
namespace {

// Longest Kubernetes object name (a DNS subdomain); anything longer is not a real pod.
constexpr size_t kMaxNameLength = 253;

// Who holds what, while one pod's containers are read.
struct Owner {
  const std::string& ns;
  const std::string& pod;
  const std::string& container;
};

struct Key {
  int device, core;
  std::string ns, pod;
  bool operator<(const Key& o) const {
    return std::tie(device, core, ns, pod) < std::tie(o.device, o.core, o.ns, o.pod);
  }
};

struct Holders {
  std::set<std::string> containers, resources;
};

// For the log: hostile names may hold quotes, newlines or megabytes.
std::string Quoted(const std::string& s) {
  return absl::StrCat("\"", absl::CHexEscape(s.substr(0, 64)), "\"");
}

class Builder {
 public:
  explicit Builder(const NodeLayout& layout) : layout_(layout) {}

  void AddPod(const v1::PodResources& pod) {
    if (!ValidName(pod.namespace_()) || !ValidName(pod.name())) {
      Problem(absl::StrCat("pod ", Quoted(pod.namespace_()), "/", Quoted(pod.name()),
                           " ignored: an empty or over-long namespace or name"));
      return;
    }
    for (const v1::ContainerResources& c : pod.containers()) {
      if (!ValidName(c.name())) {
        Problem(absl::StrCat("pod ", absl::CHexEscape(pod.namespace_()), "/",
                             absl::CHexEscape(pod.name()), ": container ", Quoted(c.name()),
                             " ignored: an empty or over-long name"));
        continue;
      }
      const Owner owner{pod.namespace_(), pod.name(), c.name()};
      for (const v1::ContainerDevices& d : c.devices()) AddDevicePluginIds(owner, d);
      for (const v1::DynamicResource& r : c.dynamic_resources()) {
        for (const v1::ClaimResource& cr : r.claim_resources()) AddClaimDevice(owner, r, cr);
      }
    }
  }

  PodAttribution Finish() && {
    PodAttribution out;
    out.cores.reserve(rows_.size());
    for (auto& [key, holders] : rows_) {
      out.cores.push_back({key.device, key.core, key.ns, key.pod,
                           absl::StrJoin(holders.containers, ","),
                           absl::StrJoin(holders.resources, ",")});
    }
    out.problems = std::move(problems_);
    out.problems_total = problems_total_;
    return out;
  }

 private:
  static bool ValidName(const std::string& s) { return !s.empty() && s.size() <= kMaxNameLength; }

  void Problem(std::string what) {
    ++problems_total_;
    if (problems_.size() < static_cast<size_t>(kMaxProblems)) problems_.push_back(std::move(what));
  }

  std::string Where(const Owner& o) const {
    return absl::StrCat("pod ", absl::CHexEscape(o.ns), "/", absl::CHexEscape(o.pod), " container ",
                        absl::CHexEscape(o.container));
  }

  const NodeLayout::Device* FindDevice(int index) const {
    for (const auto& d : layout_.devices) {
      if (d.index == index) return &d;
    }
    return nullptr;
  }

  // Logical cores per device, from the first device whose count is known; 0 while LNC is not.
  int LogicalPerDevice() const {
    if (layout_.lnc <= 0) return 0;
    for (const auto& d : layout_.devices) {
      if (d.physical_cores > 0) return d.physical_cores / layout_.lnc;
    }
    return 0;
  }

  void AddCore(const Owner& o, int device, int core, const std::string& resource) {
    Holders& h = rows_[Key{device, core, o.ns, o.pod}];
    h.containers.insert(o.container);
    h.resources.insert(resource);
  }

  bool AddDevice(const Owner& o, int device, const std::string& resource) {
    const NodeLayout::Device* d = FindDevice(device);
    if (d == nullptr) return false;
    for (int c = 0; c < d->physical_cores; ++c) AddCore(o, device, c, resource);
    return true;
  }

  // Logical core `logical` of `device` at the node's LNC: its physical cores.
  bool AddLogicalCore(const Owner& o, int device, int logical, const std::string& resource) {
    const NodeLayout::Device* d = FindDevice(device);
    if (d == nullptr || layout_.lnc <= 0) return false;
    const int first = logical * layout_.lnc;
    if (logical < 0 || first + layout_.lnc > d->physical_cores) return false;
    for (int c = first; c < first + layout_.lnc; ++c) AddCore(o, device, c, resource);
    return true;
  }

  void AddDevicePluginIds(const Owner& o, const v1::ContainerDevices& d) {
    const std::optional<assignment::ResourceKind> kind =
        assignment::ParseResourceKind(d.resource_name());
    if (!kind || d.resource_name() != assignment::ResourceName(*kind)) return;  // not ours
    const std::string& resource = d.resource_name();
    for (const std::string& id : d.device_ids()) {
      const absl::StatusOr<int> n = assignment::ParseId(id);
      bool placed = false;
      if (n.ok() && *kind == assignment::ResourceKind::kDevice) {
        placed = AddDevice(o, *n, resource);
      } else if (n.ok()) {
        const int per_device = LogicalPerDevice();
        placed = per_device > 0 && AddLogicalCore(o, *n / per_device, *n % per_device, resource);
      }
      if (!placed) {
        Problem(absl::StrCat(Where(o), ": ", resource, " ID ", Quoted(id),
                             " ignored: not a device or core of this node",
                             layout_.lnc <= 0 ? " (LNC unknown)" : ""));
      }
    }
  }

  void AddClaimDevice(const Owner& o, const v1::DynamicResource& r, const v1::ClaimResource& cr) {
    if (cr.driver_name() != dra::kDriverName) return;  // another driver's device
    const std::string claim =
        absl::StrCat("claim ", Quoted(r.claim_namespace()), "/", Quoted(r.claim_name()));
    if (!layout_.pool.empty() && cr.pool_name() != layout_.pool) {
      Problem(absl::StrCat(Where(o), ": ", claim, " device ", Quoted(cr.device_name()),
                           " ignored: pool ", Quoted(cr.pool_name()), " is not this node's"));
      return;
    }
    const std::string resource = kDraResource;
    const absl::StatusOr<dra::DeviceRef> ref = dra::ParseDeviceName(cr.device_name());
    bool placed = false;
    if (ref.ok() && ref->node) {
      for (const auto& d : layout_.devices) placed = AddDevice(o, d.index, resource) || placed;
    } else if (ref.ok() && ref->core) {
      placed = AddLogicalCore(o, ref->device, *ref->core, resource);
    } else if (ref.ok()) {
      placed = AddDevice(o, ref->device, resource);
    }
    if (!placed) {
      Problem(absl::StrCat(Where(o), ": ", claim, " device ", Quoted(cr.device_name()),
                           " ignored: not a device or core of this node",
                           layout_.lnc <= 0 ? " (LNC unknown)" : ""));
    }
  }

  const NodeLayout& layout_;
  std::map<Key, Holders> rows_;
  std::vector<std::string> problems_;
  int problems_total_ = 0;
};

}  // namespace

NodeLayout NodeLayoutFrom(const inventory::Inventory& inv) {
  NodeLayout layout;
  layout.lnc = inv.lnc;
  layout.pool = inv.node_name;
  for (const inventory::Device& d : inv.devices) {
    if (d.present) layout.devices.push_back({d.index, d.physical_cores});
  }
  std::sort(layout.devices.begin(), layout.devices.end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
  return layout;
}

PodAttribution AttributePods(const v1::ListPodResourcesResponse& reply, const NodeLayout& layout) {
  Builder b(layout);
  for (const v1::PodResources& pod : reply.pod_resources()) b.AddPod(pod);
  return std::move(b).Finish();
}

}  // namespace neuron::agent
