#include "lib/dra/resource_slice_json.h"

#include "absl/time/time.h"

namespace neuron::dra {
namespace {

// resource.Quantity in its canonical string form; our quantities are plain integers.
nlohmann::json Quantity(int64_t v) { return {{"value", std::to_string(v)}}; }

nlohmann::json Counters(const std::map<std::string, int64_t>& counters) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, value] : counters) out[name] = Quantity(value);
  return out;
}

nlohmann::json TaintJson(const DeviceTaint& t) {
  nlohmann::json out = {
      {"key", t.key}, {"effect", t.effect == TaintEffect::kNoExecute ? "NoExecute" : "NoSchedule"}};
  if (!t.value.empty()) out["value"] = t.value;
  if (t.time_added != absl::InfinitePast()) {  // metav1.Time: RFC 3339, whole seconds, UTC
    out["timeAdded"] = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t.time_added, absl::UTCTimeZone());
  }
  return out;
}

// The device's fields other than its name (v1: beside the name; v1beta1: under "basic").
nlohmann::json DeviceFields(const SliceDevice& d) {
  nlohmann::json out = nlohmann::json::object();
  if (!d.attributes.empty()) {
    nlohmann::json& attrs = out["attributes"] = nlohmann::json::object();
    for (const auto& [name, value] : d.attributes) attrs[name] = AttributeJson(value);
  }
  if (!d.capacity.empty()) out["capacity"] = Counters(d.capacity);
  for (const CounterConsumption& c : d.consumes_counters) {
    out["consumesCounters"].push_back(
        {{"counterSet", c.counter_set}, {"counters", Counters(c.counters)}});
  }
  for (const DeviceTaint& t : d.taints) out["taints"].push_back(TaintJson(t));
  return out;
}

nlohmann::json DeviceJson(const SliceDevice& d, ResourceApi api) {
  if (api == ResourceApi::kV1beta1) return {{"name", d.name}, {"basic", DeviceFields(d)}};
  nlohmann::json out = DeviceFields(d);
  out["name"] = d.name;
  return out;
}

}  // namespace

nlohmann::json AttributeJson(const AttributeValue& value) {
  switch (value.kind) {
    case AttributeValue::Kind::kInt:
      return {{"int", value.int_value}};
    case AttributeValue::Kind::kBool:
      return {{"bool", value.bool_value}};
    case AttributeValue::Kind::kVersion:
      return {{"version", value.text}};
    case AttributeValue::Kind::kString:
      break;
  }
  return {{"string", value.text}};
}

nlohmann::json ResourceSliceJson(const ResourceSliceModel& slice, ResourceApi api) {
  nlohmann::json spec = {
      {"driver", slice.driver},
      {"pool",
       {{"name", slice.pool_name},
        {"generation", slice.pool_generation},
        {"resourceSliceCount", slice.resource_slice_count}}},
      {"nodeName", slice.node_name},
      {"devices", nlohmann::json::array()},
  };
  for (const SliceDevice& d : slice.devices) spec["devices"].push_back(DeviceJson(d, api));
  for (const CounterSet& c : slice.shared_counters) {
    spec["sharedCounters"].push_back({{"name", c.name}, {"counters", Counters(c.counters)}});
  }
  return {
      {"apiVersion", api == ResourceApi::kV1 ? "resource.k8s.io/v1" : "resource.k8s.io/v1beta1"},
      {"kind", "ResourceSlice"},
      {"metadata", {{"name", slice.name}}},
      {"spec", std::move(spec)},
  };
}

std::string ResourceSliceJsonText(const ResourceSliceModel& slice, ResourceApi api) {
  return ResourceSliceJson(slice, api)
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace neuron::dra
