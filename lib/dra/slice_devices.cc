#include "lib/dra/slice_devices.h"

#include <cctype>

#include "lib/dra/names.h"

namespace neuron::dra::internal {
namespace {

constexpr size_t kLabelValueMax = 63;

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

}  // namespace

std::map<std::string, AttributeValue> NodeAttributes(const NodeContext& ctx) {
  std::map<std::string, AttributeValue> out = {
      {"instanceType", AttributeValue::String(ctx.node->shape->instance_type)},
      // Strings, not versions: AWS's templates compare with string literals ('2.24.7.0' is not
      // semver), and one name must have one type on every node.
      {"neuronDriverVersion", AttributeValue::String(ctx.node->neuron_driver_version)},
      {"draDriverVersion", AttributeValue::String(ctx.node->dra_driver_version)},
  };
  for (size_t i = 0; i < ctx.node->network_node_layers.size(); ++i) {
    if (!ctx.node->network_node_layers[i].empty()) {
      out["networkNodeLayer" + std::to_string(i + 1)] =
          AttributeValue::String(ctx.node->network_node_layers[i]);
    }
  }
  return out;
}

namespace {

// Attributes a whole device and its partitions share.
std::map<std::string, AttributeValue> CommonAttributes(const NodeContext& ctx, int device) {
  const GridPosition pos = PositionOf(ctx.topology, device);
  std::map<std::string, AttributeValue> out = NodeAttributes(ctx);
  out.insert({
      {"deviceId", AttributeValue::Int(device)},
      {"topology_x", AttributeValue::Int(pos.x)},
      {"topology_y", AttributeValue::Int(pos.y)},
  });
  return out;
}

void AddGroupAttributes(const NodeContext& ctx, int device, SliceDevice& out) {
  for (int size : kGroupSizes) {
    const DeviceGroup* g = ctx.groups.Find(size, device);
    if (g == nullptr) continue;
    out.attributes[DeviceGroupAttribute(size)] = AttributeValue::String(g->id);
    if (size == 4 || size == 8) {
      out.attributes["topology" + std::to_string(size) + "_id"] = AttributeValue::Int(g->index);
    }
  }
}

void AddTaint(const NodeContext& ctx, int device, SliceDevice& out) {
  auto it = ctx.node->health.find(device);
  if (it == ctx.node->health.end()) return;
  if (std::optional<DeviceTaint> taint = UnhealthyTaint(it->second)) out.taints.push_back(*taint);
}

}  // namespace

SliceDevice WholeDevice(const NodeContext& ctx, int device) {
  SliceDevice out;
  out.name = DeviceName(device);
  out.attributes = CommonAttributes(ctx, device);
  out.attributes["resourceType"] = AttributeValue::String(std::string(kResourceTypeDevice));
  AddGroupAttributes(ctx, device, out);
  const int cores = ctx.topology.cores_per_device;
  out.capacity[std::string(kCoresCounter)] = cores;
  if (ctx.partitionable) {
    out.consumes_counters.push_back(
        {CounterSetName(device), {{std::string(kCoresCounter), cores}}});
  }
  AddTaint(ctx, device, out);
  return out;
}

std::vector<SliceDevice> CorePartitions(const NodeContext& ctx, int device) {
  std::vector<SliceDevice> out;
  for (int core = 0; core < ctx.topology.cores_per_device; ++core) {
    SliceDevice p;
    p.name = CoreDeviceName(device, core);
    p.attributes = CommonAttributes(ctx, device);
    p.attributes["resourceType"] = AttributeValue::String(std::string(kResourceTypeCore));
    p.attributes["coreId"] = AttributeValue::Int(core);
    p.capacity[std::string(kCoresCounter)] = 1;
    p.consumes_counters.push_back({CounterSetName(device), {{std::string(kCoresCounter), 1}}});
    AddTaint(ctx, device, p);
    out.push_back(std::move(p));
  }
  return out;
}

CounterSet DeviceCounterSet(const NodeContext& ctx, int device) {
  return {CounterSetName(device), {{std::string(kCoresCounter), ctx.topology.cores_per_device}}};
}

std::optional<DeviceTaint> UnhealthyTaint(const DeviceHealth& health) {
  if (health.healthy) return std::nullopt;
  DeviceTaint t;
  t.key = std::string(kUnhealthyTaintKey);
  t.value = LabelValue(health.reason);
  t.effect = health.evict ? TaintEffect::kNoExecute : TaintEffect::kNoSchedule;
  t.time_added = health.since;
  return t;
}

std::string LabelValue(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, kLabelValueMax)) {
    out.push_back(IsAlnum(c) || c == '-' || c == '_' || c == '.' ? c : '_');
  }
  while (!out.empty() && !IsAlnum(out.back())) out.pop_back();
  size_t first = 0;
  while (first < out.size() && !IsAlnum(out[first])) ++first;
  return out.substr(first);
}

}  // namespace neuron::dra::internal
