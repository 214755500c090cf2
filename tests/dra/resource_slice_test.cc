// ResourceSlices as the API server receives them: names, attribute types, capacity, v1 vs
// v1beta1 shape, unhealthy devices with and without taints, partitionable devices.
#include "lib/dra/resource_slice.h"

#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>

#include "absl/time/time.h"
#include "lib/dra/names.h"
#include "lib/dra/resource_slice_json.h"
#include "lib/dra/slice_devices.h"
#include "lib/topology/shapes.h"
#include "nlohmann/json.hpp"

namespace neuron::dra {
namespace {

using nlohmann::json;

NodeDeviceInfo Node(const char* instance_type, int lnc = 0) {
  NodeDeviceInfo n;
  n.node_name = "ip-10-0-0-1.ec2.internal";
  n.shape = topology::FindShape(instance_type);
  n.lnc = lnc;
  n.neuron_driver_version = "2.24.7.0";
  n.dra_driver_version = "0.1.0";
  return n;
}

std::vector<ResourceSliceModel> Build(const NodeDeviceInfo& n, SliceOptions o = {}) {
  absl::StatusOr<std::vector<ResourceSliceModel>> s = BuildResourceSlices(n, o);
  REQUIRE(s.ok());
  return *s;
}

TEST_CASE("a trn2.48xlarge node publishes one slice of 16 devices named as AWS names them") {
  const auto slices = Build(Node("trn2.48xlarge"));
  REQUIRE(slices.size() == 1);
  const json j = ResourceSliceJson(slices[0], ResourceApi::kV1);
  CHECK(j["apiVersion"] == "resource.k8s.io/v1");
  CHECK(j["kind"] == "ResourceSlice");
  CHECK(j["metadata"]["name"] == "ip-10-0-0-1.ec2.internal-neuron.aws.com-0");
  const json& spec = j["spec"];
  CHECK(spec["driver"] == "neuron.aws.com");
  CHECK(spec["nodeName"] == "ip-10-0-0-1.ec2.internal");
  CHECK(spec["pool"] ==
        json{{"name", "ip-10-0-0-1.ec2.internal"}, {"generation", 1}, {"resourceSliceCount", 1}});
  CHECK_FALSE(spec.contains("sharedCounters"));
  REQUIRE(spec["devices"].size() == 16);
  const json& d5 = spec["devices"][5];
  CHECK(d5["name"] == "neurondevice5");
  const json& a = d5["attributes"];
  CHECK(a["deviceId"] == json{{"int", 5}});
  CHECK(a["instanceType"] == json{{"string", "trn2.48xlarge"}});
  CHECK(a["neuronDriverVersion"] == json{{"string", "2.24.7.0"}});
  CHECK(a["draDriverVersion"] == json{{"string", "0.1.0"}});
  CHECK(a["resourceType"] == json{{"string", "neuron_device"}});
  CHECK(a["topology_x"] == json{{"int", 1}});
  CHECK(a["topology_y"] == json{{"int", 1}});
  CHECK(a["topology4_id"] == json{{"int", 1}});
  CHECK(a["topology8_id"] == json{{"int", 0}});
  for (int k : {1, 4, 8, 16}) {
    INFO(k);
    CHECK(a[DeviceGroupAttribute(k)]["string"].get<std::string>().size() == 16);
  }
  CHECK(d5["capacity"] == json{{"cores", {{"value", "4"}}}});  // LNC 2 (trn2 default): 8 / 2
  CHECK_FALSE(d5.contains("taints"));
  CHECK_FALSE(d5.contains("consumesCounters"));
}

TEST_CASE("v1beta1 nests each device's fields under basic; the rest is the same") {
  const auto slices = Build(Node("inf2.48xlarge"));
  const json v1 = ResourceSliceJson(slices[0], ResourceApi::kV1);
  const json beta = ResourceSliceJson(slices[0], ResourceApi::kV1beta1);
  CHECK(beta["apiVersion"] == "resource.k8s.io/v1beta1");
  REQUIRE(beta["spec"]["devices"].size() == 12);
  for (size_t i = 0; i < 12; ++i) {
    const json& b = beta["spec"]["devices"][i];
    json flat = b["basic"];
    flat["name"] = b["name"];
    CHECK(b.size() == 2);
    CHECK(flat == v1["spec"]["devices"][i]);
  }
  json spec_v1 = v1["spec"], spec_beta = beta["spec"];
  spec_v1.erase("devices");
  spec_beta.erase("devices");
  CHECK(spec_v1 == spec_beta);
}

TEST_CASE("LNC sets the cores a device offers") {
  CHECK(Build(Node("trn2.48xlarge", 1))[0].devices[0].capacity.at("cores") == 8);
  CHECK(Build(Node("trn1.32xlarge"))[0].devices[0].capacity.at("cores") == 2);
  CHECK(Build(Node("inf1.24xlarge"))[0].devices[0].capacity.at("cores") == 4);
}

TEST_CASE("bad input is an InvalidArgument, not a slice") {
  NodeDeviceInfo n = Node("trn1.32xlarge", 2);  // trn1 has no LNC 2
  CHECK(BuildResourceSlices(n, {}).status().code() == absl::StatusCode::kInvalidArgument);
  n = Node("trn1.32xlarge");
  n.shape = nullptr;
  CHECK(BuildResourceSlices(n, {}).status().code() == absl::StatusCode::kInvalidArgument);
  n = Node("trn1.32xlarge");
  n.node_name.clear();
  CHECK(BuildResourceSlices(n, {}).status().code() == absl::StatusCode::kInvalidArgument);
  n = Node("trn1.32xlarge");
  n.neuron_driver_version = std::string(65, '1');
  CHECK(BuildResourceSlices(n, {}).status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("unhealthy devices: left out without DRADeviceTaints, tainted with it") {
  NodeDeviceInfo n = Node("trn1.32xlarge");
  n.health[3] = {false, "NC_UNCORRECTABLE_ERROR", false, absl::FromUnixSeconds(1767225600)};
  n.health[4] = {false, "hang on collectives!", true, absl::InfinitePast()};
  n.health[5] = {true, "", false, absl::InfinitePast()};

  SECTION("without the gate") {
    const auto slices = Build(n);
    std::set<std::string> names;
    for (const SliceDevice& d : slices[0].devices) names.insert(d.name);
    CHECK(names.size() == 14);
    CHECK(names.count("neurondevice3") == 0);
    CHECK(names.count("neurondevice4") == 0);
    CHECK(names.count("neurondevice5") == 1);
  }
  SECTION("with the gate") {
    const auto slices = Build(n, {.device_taints = true});
    const json devices = ResourceSliceJson(slices[0], ResourceApi::kV1)["spec"]["devices"];
    REQUIRE(devices.size() == 16);
    CHECK(devices[3]["taints"] == json::parse(R"([{"key": "neuron.aws.com/unhealthy",
        "value": "NC_UNCORRECTABLE_ERROR", "effect": "NoSchedule",
        "timeAdded": "2026-01-01T00:00:00Z"}])"));
    CHECK(devices[4]["taints"] == json::parse(R"([{"key": "neuron.aws.com/unhealthy",
        "value": "hang_on_collectives", "effect": "NoExecute"}])"));
    CHECK_FALSE(devices[5].contains("taints"));
  }
}

TEST_CASE("taint values are made valid label values") {
  CHECK(internal::LabelValue("NC_UNCORRECTABLE_ERROR") == "NC_UNCORRECTABLE_ERROR");
  CHECK(internal::LabelValue("  ecc: 3 errors ") == "ecc__3_errors");
  CHECK(internal::LabelValue("---") == "");
  CHECK(internal::LabelValue(std::string(100, 'a')).size() == 63);
  CHECK(internal::LabelValue("é") == "");
}

// Every counter a device consumes exists in its own slice, and a device plus all its cores
// would need twice what the set holds: the scheduler can never hand out both.
void CheckCounters(const ResourceSliceModel& s) {
  std::map<std::string, int64_t> available;
  for (const CounterSet& c : s.shared_counters) available[c.name] = c.counters.at("cores");
  std::map<std::string, int64_t> demanded;
  for (const SliceDevice& d : s.devices) {
    REQUIRE(d.consumes_counters.size() == 1);
    const CounterConsumption& c = d.consumes_counters[0];
    REQUIRE(available.count(c.counter_set) == 1);
    demanded[c.counter_set] += c.counters.at("cores");
  }
  for (const auto& [set, cores] : available) CHECK(demanded[set] == 2 * cores);
  CHECK(s.devices.size() <= 128);
  CHECK(s.shared_counters.size() <= 32);
}

TEST_CASE("partitionable devices: counter sets, per-core partitions, slices within API limits") {
  const auto slices = Build(Node("trn2.48xlarge", 1), {.partitionable = true});
  REQUIRE(slices.size() == 2);  // 16 x (1 + 8) = 144 devices > 128 per slice
  size_t devices = 0;
  std::set<std::string> slice_names;
  for (const ResourceSliceModel& s : slices) {
    CHECK(s.resource_slice_count == 2);
    CHECK(s.pool_name == "ip-10-0-0-1.ec2.internal");
    slice_names.insert(s.name);
    devices += s.devices.size();
    CheckCounters(s);
  }
  CHECK(slice_names.size() == 2);
  CHECK(devices == 144);

  const json j = ResourceSliceJson(slices[0], ResourceApi::kV1);
  CHECK(j["spec"]["sharedCounters"][0] ==
        json::parse(R"({"name": "neurondevice0-cores", "counters": {"cores": {"value": "8"}}})"));
  const json& whole = j["spec"]["devices"][0];
  CHECK(whole["name"] == "neurondevice0");
  CHECK(whole["consumesCounters"] == json::parse(R"([{"counterSet": "neurondevice0-cores",
      "counters": {"cores": {"value": "8"}}}])"));
  const json& core = j["spec"]["devices"][2];
  CHECK(core["name"] == "neurondevice0-core1");
  CHECK(core["attributes"]["resourceType"] == json{{"string", "neuron_core"}});
  CHECK(core["attributes"]["coreId"] == json{{"int", 1}});
  CHECK(core["attributes"]["deviceId"] == json{{"int", 0}});
  CHECK_FALSE(core["attributes"].contains("resource.aws.com/devicegroup1_id"));
  CHECK(core["consumesCounters"] == json::parse(R"([{"counterSet": "neurondevice0-cores",
      "counters": {"cores": {"value": "1"}}}])"));
  const json beta = ResourceSliceJson(slices[0], ResourceApi::kV1beta1);
  CHECK(beta["spec"]["devices"][2]["basic"]["consumesCounters"] == core["consumesCounters"]);
}

TEST_CASE("partitions of an unhealthy device share its fate") {
  NodeDeviceInfo n = Node("trn1.32xlarge");
  n.health[2] = {false, "DMA_ERROR", false, absl::InfinitePast()};
  const auto hidden = Build(n, {.partitionable = true});
  for (const SliceDevice& d : hidden[0].devices) CHECK(d.name.rfind("neurondevice2", 0) != 0);
  CHECK(hidden[0].shared_counters.size() == 15);
  CheckCounters(hidden[0]);
  const auto tainted = Build(n, {.partitionable = true, .device_taints = true});
  int tainted_count = 0;
  for (const SliceDevice& d : tainted[0].devices) tainted_count += d.taints.empty() ? 0 : 1;
  CHECK(tainted_count == 3);  // neurondevice2, -core0, -core1
}

TEST_CASE("every shape fits the API's per-device and per-slice limits in every mode") {
  for (const topology::Shape& shape : topology::AllShapes()) {
    for (bool partitionable : {false, true}) {
      INFO(shape.instance_type << " partitionable=" << partitionable);
      const auto slices =
          Build(Node(shape.instance_type.c_str()), {.partitionable = partitionable});
      for (const ResourceSliceModel& s : slices) {
        CHECK(s.devices.size() <= 128);
        CHECK(s.shared_counters.size() <= 32);
        CHECK(s.name.size() <= 253);
        for (const SliceDevice& d : s.devices) {
          CHECK(d.attributes.size() + d.capacity.size() <= 32);
          CHECK(d.name.size() <= 63);
        }
        if (partitionable) CheckCounters(s);
      }
    }
  }
}

TEST_CASE("a node with every device hidden still publishes one empty slice for its pool") {
  NodeDeviceInfo n = Node("inf2.xlarge");
  n.health[0] = {false, "gone", false, absl::InfinitePast()};
  const auto slices = Build(n);
  REQUIRE(slices.size() == 1);
  CHECK(slices[0].devices.empty());
  CHECK(ResourceSliceJson(slices[0], ResourceApi::kV1)["spec"]["devices"] == json::array());
}

TEST_CASE("a very long node name still gives a valid object name") {
  NodeDeviceInfo n = Node("inf2.xlarge");
  n.node_name = std::string(240, 'a') + "." + std::string(12, 'b');
  const auto slices = Build(n);
  CHECK(slices[0].name.size() <= 253);
  CHECK(slices[0].name.find(".-") == std::string::npos);
  CHECK(slices[0].pool_name == n.node_name);
}

TEST_CASE("attribute values render in the API's one-of form") {
  CHECK(AttributeJson(AttributeValue::Int(3)) == json{{"int", 3}});
  CHECK(AttributeJson(AttributeValue::Bool(true)) == json{{"bool", true}});
  CHECK(AttributeJson(AttributeValue::String("x")) == json{{"string", "x"}});
  CHECK(AttributeJson(AttributeValue::Version("1.2.3")) == json{{"version", "1.2.3"}});
}

// node 2 of UltraServer "bog79p1y8tetj5uu", pair "ygml2651y0lwdd46" (node 0 of it).
ultraserver::Identity UltraServerNode() {
  ultraserver::Identity id;
  id.modes = {1, 2, 4};
  id.server_id_4 = "bog79p1y8tetj5uu";
  id.node_id_4 = 2;
  id.server_id_2 = "ygml2651y0lwdd46";
  id.node_id_2 = 0;
  return id;
}

const SliceDevice* Find(const std::vector<ResourceSliceModel>& slices, const std::string& name) {
  for (const ResourceSliceModel& s : slices) {
    for (const SliceDevice& d : s.devices) {
      if (d.name == name) {
        return &d;
      }
    }
  }
  return nullptr;
}

TEST_CASE("an UltraServer node publishes the node device with its set attributes") {
  NodeDeviceInfo n = Node("trn2u.48xlarge");
  n.ultraserver = UltraServerNode();
  const auto slices = Build(n);
  REQUIRE(slices.size() == 1);
  REQUIRE(slices[0].devices.size() == 17);
  const json j = ResourceSliceJson(slices[0], ResourceApi::kV1);
  const json& node = j["spec"]["devices"][16];
  CHECK(node["name"] == "neuronnode");
  CHECK(node["attributes"] == json::parse(R"({
      "resourceType": {"string": "neuron_node"},
      "instanceType": {"string": "trn2u.48xlarge"},
      "neuronDriverVersion": {"string": "2.24.7.0"},
      "draDriverVersion": {"string": "0.1.0"},
      "ultraserverModes": {"string": "1_2_4"},
      "ultraserverServerId4": {"string": "bog79p1y8tetj5uu"},
      "ultraserverNodeId4": {"int": 2},
      "ultraserverServerId2": {"string": "ygml2651y0lwdd46"},
      "ultraserverNodeId2": {"int": 0}})"));
  CHECK_FALSE(node.contains("consumesCounters"));  // gate off: exclusive at prepare instead
  CHECK_FALSE(node.contains("capacity"));
  // The ordinary devices are unchanged.
  CHECK(j["spec"]["devices"][3]["attributes"]["resourceType"] == json{{"string", "neuron_device"}});

  // A node supporting only X1 (no set ids) still has the node device, without set attributes.
  n.ultraserver = ultraserver::Identity{};
  n.ultraserver->modes = {4};
  const auto alone_slices = Build(n);
  const SliceDevice* alone = Find(alone_slices, "neuronnode");
  REQUIRE(alone != nullptr);
  CHECK(alone->attributes.at("ultraserverModes") == AttributeValue::String("4"));
  CHECK(alone->attributes.count("ultraserverServerId4") == 0);
}

TEST_CASE("no node device without an UltraServer identity (trn1, trn2u outside a server)") {
  for (const char* type : {"trn1.32xlarge", "trn2u.48xlarge", "trn2.48xlarge"}) {
    INFO(type);
    for (bool partitionable : {false, true}) {
      CHECK(Find(Build(Node(type), {.partitionable = partitionable}), "neuronnode") == nullptr);
    }
  }
}

TEST_CASE("partitionable: the node device consumes every device's whole counter set") {
  NodeDeviceInfo n = Node("trn2u.48xlarge");  // LNC 2: 4 cores per device
  n.ultraserver = UltraServerNode();
  const auto slices = Build(n, {.partitionable = true});
  REQUIRE(slices.size() == 1);
  CHECK(slices[0].devices.size() == 16 + 64 + 1);
  std::map<std::string, int64_t> by_node, by_others, available;
  for (const CounterSet& c : slices[0].shared_counters) available[c.name] = c.counters.at("cores");
  for (const SliceDevice& d : slices[0].devices) {
    for (const CounterConsumption& c : d.consumes_counters) {
      REQUIRE(available.count(c.counter_set) == 1);
      (d.name == "neuronnode" ? by_node : by_others)[c.counter_set] += c.counters.at("cores");
    }
  }
  REQUIRE(available.size() == 16);
  CHECK(by_node == available);  // the node device takes everything: nothing else fits beside it
  for (const auto& [set, cores] : available) CHECK(by_others[set] == 2 * cores);
  const SliceDevice* node = Find(slices, "neuronnode");
  REQUIRE(node != nullptr);
  CHECK(node->consumes_counters.size() <= 32);

  // LNC 1: 144 devices need two slices, and counters only count within one: no counters.
  n.lnc = 1;
  const auto split = Build(n, {.partitionable = true});
  REQUIRE(split.size() == 2);
  const SliceDevice* node1 = Find(split, "neuronnode");
  REQUIRE(node1 != nullptr);
  CHECK(node1->consumes_counters.empty());
  for (const ResourceSliceModel& s : split) {
    CHECK(s.devices.size() <= 128);
    CHECK(s.resource_slice_count == 2);
  }
}

TEST_CASE("the node device shares every device's fate") {
  NodeDeviceInfo n = Node("trn2u.48xlarge");
  n.ultraserver = UltraServerNode();
  n.health[5] = {false, "DMA_ERROR", false, absl::InfinitePast()};
  CHECK(Find(Build(n), "neuronnode") == nullptr);  // a hidden device: the node is not whole
  const auto tainted_slices = Build(n, {.device_taints = true});
  const SliceDevice* tainted = Find(tainted_slices, "neuronnode");
  REQUIRE(tainted != nullptr);
  REQUIRE(tainted->taints.size() == 1);
  CHECK(tainted->taints[0].effect == TaintEffect::kNoSchedule);
  n.health[9] = {false, "uncorrectable", true, absl::InfinitePast()};
  const auto evicting_slices = Build(n, {.device_taints = true});
  const SliceDevice* evicting = Find(evicting_slices, "neuronnode");
  REQUIRE(evicting != nullptr);
  REQUIRE(evicting->taints.size() == 1);
  CHECK(evicting->taints[0].effect == TaintEffect::kNoExecute);
}

TEST_CASE("network node layers from the node's labels are on every device") {
  NodeDeviceInfo n = Node("trn2u.48xlarge");
  n.ultraserver = UltraServerNode();
  n.network_node_layers = {"nn-e50490a237cb0f01a", "nn-2ab4", ""};
  const auto slices = Build(n, {.partitionable = true});
  for (const ResourceSliceModel& s : slices) {
    for (const SliceDevice& d : s.devices) {
      INFO(d.name);
      CHECK(d.attributes.at("networkNodeLayer1") == AttributeValue::String("nn-e50490a237cb0f01a"));
      CHECK(d.attributes.at("networkNodeLayer2") == AttributeValue::String("nn-2ab4"));
      CHECK(d.attributes.count("networkNodeLayer3") == 0);  // unknown: left out
      CHECK(d.attributes.size() + d.capacity.size() <= 32);
    }
  }
  CHECK(Build(Node("trn1.2xlarge"))[0].devices[0].attributes.count("networkNodeLayer1") == 0);
}

}  // namespace
}  // namespace neuron::dra
