// File: lib/deviceplugin/allocator.cc
#include "lib/deviceplugin/allocator.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "lib/topology/choose.h"

namespace neuron::deviceplugin {
namespace {

std::vector<std::string> ToStrings(const std::vector<int>& ids) {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (int id : ids) out.push_back(std::to_string(id));
  return out;
}

bool Contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

Allocator::Allocator(assignment::ResourceKind kind, AllocatorOptions opts)
    : kind_(kind), opts_(std::move(opts)) {}

int Allocator::Count(const NodeSnapshot& node) const {
  return kind_ == assignment::ResourceKind::kDevice ? static_cast<int>(node.devices.size())
                                                    : node.total_cores();
}

bool Allocator::Healthy(const NodeSnapshot& node, int id) const {
  const int device = kind_ == assignment::ResourceKind::kDevice ? id : id / node.cores_per_device();
  return node.devices[device].healthy;
}

std::vector<AdvertisedDevice> Allocator::Devices(const NodeSnapshot& node) const {
  std::vector<AdvertisedDevice> out;
  const int n = Count(node);
  out.reserve(n);
  for (int id = 0; id < n; ++id) {
    const int device =
        kind_ == assignment::ResourceKind::kDevice ? id : id / node.cores_per_device();
    const DeviceState& d = node.devices[device];
    out.push_back({std::to_string(id), d.healthy, d.numa_node});
  }
  return out;
}

absl::StatusOr<std::vector<int>> Allocator::ParseIds(const NodeSnapshot& node,
                                                     const std::vector<std::string>& ids) const {
  const int n = Count(node);
  std::vector<int> out;
  std::set<int> seen;
  for (const std::string& s : ids) {
    absl::StatusOr<int> id = assignment::ParseId(s);
    if (!id.ok() || *id >= n) {
      return absl::InvalidArgumentError(absl::StrCat("unknown ", assignment::ResourceName(kind_),
                                                     " ID \"", s, "\" (this node has IDs 0..",
                                                     n - 1, ")"));
    }
    if (!seen.insert(*id).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("duplicate ", assignment::ResourceName(kind_), " ID \"", s, "\""));
    }
    out.push_back(*id);
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> Allocator::Preferred(
    const NodeSnapshot& node, const std::vector<std::string>& available,
    const std::vector<std::string>& must_include, int size,
    const std::optional<std::vector<int>>& hint) const {
  absl::StatusOr<std::vector<int>> avail = ParseIds(node, available);
  if (!avail.ok()) return avail.status();
  absl::StatusOr<std::vector<int>> must = ParseIds(node, must_include);
  if (!must.ok()) return must.status();
  if (size < 1) {
    return absl::InvalidArgumentError(absl::StrCat("allocation_size ", size, " is not positive"));
  }
  if (size > static_cast<int>(avail->size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("allocation_size ", size, " exceeds the ", avail->size(), " available IDs"));
  }
  if (static_cast<int>(must->size()) > size) {
    return absl::InvalidArgumentError(
        absl::StrCat(must->size(), " must-include IDs exceed ", "allocation_size ", size));
  }
  for (int id : *must) {
    if (!Contains(*avail, id)) {
      return absl::InvalidArgumentError(
          absl::StrCat("must-include ID ", id, " is not among the available IDs"));
    }
  }
  // 1. The extender's choice, when it still fits.
  if (hint && static_cast<int>(hint->size()) == size &&
      std::all_of(hint->begin(), hint->end(), [&](int id) { return Contains(*avail, id); }) &&
      std::all_of(must->begin(), must->end(), [&](int id) { return Contains(*hint, id); })) {
    std::vector<int> chosen = *hint;
    std::sort(chosen.begin(), chosen.end());
    return ToStrings(chosen);
  }
  // 2. Best fit over the free set (unhealthy IDs are never offered).
  std::vector<bool> free(Count(node), false);
  for (int id : *avail) free[id] = Healthy(node, id) || Contains(*must, id);
  std::optional<std::vector<int>> best =
      kind_ == assignment::ResourceKind::kDevice
          ? topology::ChooseDevices(node.topology, free, size, *must)
          : topology::ChooseCores(node.topology, free, size, *must);
  if (best) return ToStrings(*best);
  // 3. No topology-valid set: must_include, then the lowest available IDs.
  std::vector<int> chosen = *must;
  std::vector<int> rest = *avail;
  std::sort(rest.begin(), rest.end());
  for (int id : rest) {
    if (static_cast<int>(chosen.size()) >= size) break;
    if (!Contains(chosen, id)) chosen.push_back(id);
  }
  std::sort(chosen.begin(), chosen.end());
  return ToStrings(chosen);
}

absl::StatusOr<ContainerAllocation> Allocator::Allocate(const NodeSnapshot& node,
                                                        const std::vector<std::string>& ids) const {
  if (ids.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("empty ", assignment::ResourceName(kind_), " request"));
  }
  const int n = Count(node);
  if (static_cast<int>(ids.size()) > n) {
    return absl::InvalidArgumentError(absl::StrCat("requested ", ids.size(), " ",
                                                   assignment::ResourceName(kind_),
                                                   " IDs but this node has ", n));
  }
  absl::StatusOr<std::vector<int>> parsed = ParseIds(node, ids);
  if (!parsed.ok()) return parsed.status();
  for (int id : *parsed) {
    if (!Healthy(node, id)) {
      return absl::InvalidArgumentError(
          absl::StrCat(assignment::ResourceName(kind_), " ID ", id, " is unhealthy"));
    }
  }
  const int cpd = node.cores_per_device();
  // Host-wide logical cores and the devices they live on.
  std::vector<int> cores;
  std::set<int> devices;
  for (int id : *parsed) {
    if (kind_ == assignment::ResourceKind::kDevice) {
      devices.insert(id);
      for (int c = 0; c < cpd; ++c) cores.push_back(id * cpd + c);
    } else {
      devices.insert(id / cpd);
      cores.push_back(id);
    }
  }
  ContainerAllocation out;
  const std::vector<int> device_list(devices.begin(), devices.end());
  for (int d : device_list) {
    const std::string dev = absl::StrCat("/dev/neuron", d);
    out.devices.push_back(
        {dev, opts_.device_host_path.empty() ? dev : opts_.device_host_path, "rw"});
  }
  std::vector<int> visible;
  for (int c : cores) {
    if (opts_.numbering == CoreNumbering::kHost) {
      visible.push_back(c);
    } else {
      const int rank = static_cast<int>(
          std::lower_bound(device_list.begin(), device_list.end(), c / cpd) - device_list.begin());
      visible.push_back(rank * cpd + c % cpd);
    }
  }
  // No cores while LNC is unknown (cores_per_device 0): leave the variable unset rather than
  // name cores we cannot count.
  if (!visible.empty()) out.envs["NEURON_RT_VISIBLE_CORES"] = assignment::FormatRanges(visible);
  out.envs["AWS_NEURON_VISIBLE_DEVICES"] = assignment::FormatIdList(device_list);
  return out;
}

}  // namespace neuron::deviceplugin
