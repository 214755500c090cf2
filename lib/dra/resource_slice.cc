#include "lib/dra/resource_slice.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/dra/names.h"
#include "lib/dra/node_device.h"
#include "lib/dra/slice_devices.h"
#include "lib/topology/node_topology.h"

namespace neuron::dra {
namespace {

// API limits per ResourceSlice (resource.k8s.io/v1 types.go).
constexpr int kMaxDevicesPerSlice = 128;
constexpr int kMaxSharedCountersPerSlice = 32;
constexpr int kMaxDeviceCountersPerSlice = 1024;
constexpr size_t kMaxConsumptionsPerDevice = 32;
constexpr size_t kMaxAttributeValue = 64;
constexpr size_t kMaxObjectName = 253;

absl::Status CheckInput(const NodeDeviceInfo& node) {
  if (node.node_name.empty()) return absl::InvalidArgumentError("node name is empty");
  if (node.shape == nullptr) return absl::InvalidArgumentError("no instance shape given");
  for (const std::string* v : {&node.neuron_driver_version, &node.dra_driver_version}) {
    if (v->empty() || v->size() > kMaxAttributeValue) {
      return absl::InvalidArgumentError(
          absl::StrCat("driver version \"", *v, "\" must have 1 to 64 characters"));
    }
  }
  return absl::OkStatus();
}

// One whole device with everything that must share its slice: partitions and counter set.
struct DeviceUnit {
  std::vector<SliceDevice> devices;
  std::optional<CounterSet> counters;
};

bool Published(const NodeDeviceInfo& node, const SliceOptions& options, int device) {
  auto it = node.health.find(device);
  return it == node.health.end() || it->second.healthy || options.device_taints;
}

std::vector<DeviceUnit> Units(const internal::NodeContext& ctx, const SliceOptions& options) {
  std::vector<DeviceUnit> units;
  for (int d = 0; d < ctx.topology.devices; ++d) {
    if (!Published(*ctx.node, options, d)) continue;
    DeviceUnit u;
    u.devices.push_back(internal::WholeDevice(ctx, d));
    if (options.partitionable) {
      for (SliceDevice& p : internal::CorePartitions(ctx, d)) u.devices.push_back(std::move(p));
      u.counters = internal::DeviceCounterSet(ctx, d);
    }
    units.push_back(std::move(u));
  }
  return units;
}

// How many units fit in one slice under the API's per-slice limits.
int UnitsPerSlice(int devices_per_unit, bool partitionable) {
  int n = kMaxDevicesPerSlice / devices_per_unit;
  if (partitionable) {
    n = std::min({n, kMaxSharedCountersPerSlice, kMaxDeviceCountersPerSlice / devices_per_unit});
  }
  return std::max(n, 1);
}

// "<node>-neuron.aws.com-<i>", the node part shortened to keep a valid DNS subdomain.
std::string SliceName(absl::string_view node_name, size_t index) {
  const std::string suffix = absl::StrCat("-", kDriverName, "-", index);
  std::string base(node_name.substr(0, kMaxObjectName - suffix.size()));
  while (!base.empty() && (base.back() == '.' || base.back() == '-')) base.pop_back();
  return base + suffix;
}

size_t CounterConsumptions(const ResourceSliceModel& s) {
  size_t n = 0;
  for (const SliceDevice& d : s.devices) {
    n += d.consumes_counters.size();
  }
  return n;
}

// The node device of an UltraServer node (resource_slice.h): in the first slice with room, with
// counters only when every counter set is in that one slice and the API's limits hold.
void AddNodeDevice(const internal::NodeContext& ctx, const SliceOptions& options,
                   std::vector<ResourceSliceModel>& slices) {
  std::vector<int> published;
  for (int d = 0; d < ctx.topology.devices; ++d) {
    if (!Published(*ctx.node, options, d)) {
      return;  // a hidden device: the node is not whole
    }
    published.push_back(d);
  }
  const ResourceSliceModel& first = slices.front();
  const bool consume = options.partitionable && slices.size() == 1 &&
                       first.devices.size() < static_cast<size_t>(kMaxDevicesPerSlice) &&
                       published.size() <= kMaxConsumptionsPerDevice &&
                       CounterConsumptions(first) + published.size() <=
                           static_cast<size_t>(kMaxDeviceCountersPerSlice);
  std::optional<SliceDevice> device = internal::NodeDevice(ctx, published, consume);
  if (!device) {
    return;
  }
  for (ResourceSliceModel& s : slices) {
    if (s.devices.size() < static_cast<size_t>(kMaxDevicesPerSlice)) {
      s.devices.push_back(*std::move(device));
      return;
    }
  }
  ResourceSliceModel extra = first;
  extra.name = SliceName(ctx.node->node_name, slices.size());
  extra.devices = {*std::move(device)};
  extra.shared_counters.clear();
  slices.push_back(std::move(extra));
}

}  // namespace

absl::StatusOr<std::vector<ResourceSliceModel>> BuildResourceSlices(const NodeDeviceInfo& node,
                                                                    const SliceOptions& options) {
  NEURON_RETURN_IF_ERROR(CheckInput(node));
  NEURON_ASSIGN_OR_RETURN(topology::NodeTopology t,
                          topology::TopologyForShape(*node.shape, node.lnc));
  const internal::NodeContext ctx{&node, t, DeviceGroups(t, node.node_name, node.efa_bdfs),
                                  options.partitionable};
  std::vector<DeviceUnit> units = Units(ctx, options);
  const int per_unit = options.partitionable ? 1 + t.cores_per_device : 1;
  const size_t per_slice = UnitsPerSlice(per_unit, options.partitionable);

  std::vector<ResourceSliceModel> slices;
  for (size_t first = 0; first < units.size() || slices.empty(); first += per_slice) {
    ResourceSliceModel s;
    s.name = SliceName(node.node_name, slices.size());
    s.driver = std::string(kDriverName);
    s.node_name = node.node_name;
    s.pool_name = node.node_name;
    s.pool_generation = options.pool_generation;
    for (size_t i = first; i < std::min(units.size(), first + per_slice); ++i) {
      for (SliceDevice& d : units[i].devices) s.devices.push_back(std::move(d));
      if (units[i].counters) s.shared_counters.push_back(std::move(*units[i].counters));
    }
    slices.push_back(std::move(s));
  }
  AddNodeDevice(ctx, options, slices);
  for (ResourceSliceModel& s : slices) s.resource_slice_count = static_cast<int64_t>(slices.size());
  return slices;
}

}  // namespace neuron::dra
