// File: lib/dra/node_device.cc
#include "lib/dra/node_device.h"

#include <string>

#include "lib/dra/names.h"

namespace neuron::dra::internal {
namespace {

void AddSetAttributes(const ultraserver::Identity& id, SliceDevice& out) {
  out.attributes["ultraserverModes"] =
      AttributeValue::String(ultraserver::ModesLabelValue(id.modes));
  for (int size : {2, 4}) {
    const std::optional<ultraserver::SetMember> m = id.MemberOf(size);
    if (!m) {
      continue;
    }
    const std::string n = std::to_string(size);
    out.attributes["ultraserverServerId" + n] = AttributeValue::String(m->server_id);
    out.attributes["ultraserverNodeId" + n] = AttributeValue::Int(m->node_id);
  }
}

// One taint for the whole node: NoExecute when any device's is, else the first device's.
void AddTaint(const NodeContext& ctx, const std::vector<int>& published, SliceDevice& out) {
  std::optional<DeviceTaint> worst;
  for (int d : published) {
    auto it = ctx.node->health.find(d);
    if (it == ctx.node->health.end()) {
      continue;
    }
    std::optional<DeviceTaint> t = UnhealthyTaint(it->second);
    if (t && (!worst ||
              (t->effect == TaintEffect::kNoExecute && worst->effect != TaintEffect::kNoExecute))) {
      worst = std::move(t);
    }
  }
  if (worst) {
    out.taints.push_back(*worst);
  }
}

}  // namespace

std::optional<SliceDevice> NodeDevice(const NodeContext& ctx, const std::vector<int>& published,
                                      bool consume_counters) {
  if (!ctx.node->ultraserver) {
    return std::nullopt;
  }
  SliceDevice out;
  out.name = std::string(kNodeDeviceName);
  out.attributes = NodeAttributes(ctx);
  out.attributes["resourceType"] = AttributeValue::String(std::string(kResourceTypeNode));
  AddSetAttributes(*ctx.node->ultraserver, out);
  if (consume_counters) {
    for (int d : published) {
      out.consumes_counters.push_back(
          {CounterSetName(d), {{std::string(kCoresCounter), ctx.topology.cores_per_device}}});
    }
  }
  AddTaint(ctx, published, out);
  return out;
}

}  // namespace neuron::dra::internal
