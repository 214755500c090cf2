// Device groups: the property AWS's templates rely on (equal devicegroupK_id <=> one connected
// group of exactly K devices), over every shape, as published in the ResourceSlice itself.
#include "lib/dra/device_groups.h"

#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "lib/base/sha256.h"
#include "lib/dra/names.h"
#include "lib/dra/resource_slice.h"
#include "lib/topology/topology.h"

namespace neuron::dra {
namespace {

using topology::NodeTopology;

NodeDeviceInfo Node(const topology::Shape& shape) {
  NodeDeviceInfo n;
  n.node_name = "ip-10-0-0-1.ec2.internal";
  n.shape = &shape;
  n.neuron_driver_version = "2.24.7.0";
  n.dra_driver_version = "0.1.0";
  return n;
}

// devicegroupK_id value -> device indices carrying it, read back from the published devices.
std::map<std::string, std::set<int>> MembersById(const std::vector<ResourceSliceModel>& slices,
                                                 int size) {
  std::map<std::string, std::set<int>> out;
  for (const ResourceSliceModel& s : slices) {
    for (const SliceDevice& d : s.devices) {
      auto it = d.attributes.find(DeviceGroupAttribute(size));
      if (it == d.attributes.end()) continue;
      out[it->second.text].insert(static_cast<int>(d.attributes.at("deviceId").int_value));
    }
  }
  return out;
}

std::map<std::string, std::vector<int>> kExpectedGroupCounts = {
    // sizes 1, 4, 8, 16
    {"inf1.xlarge", {1, 0, 0, 0}},     {"inf1.6xlarge", {4, 1, 0, 0}},
    {"inf1.24xlarge", {16, 4, 2, 1}},  {"inf2.xlarge", {1, 0, 0, 0}},
    {"inf2.24xlarge", {6, 1, 0, 0}},   {"inf2.48xlarge", {12, 3, 1, 0}},
    {"trn1.2xlarge", {1, 0, 0, 0}},    {"trn1.32xlarge", {16, 4, 2, 1}},
    {"trn1n.32xlarge", {16, 4, 2, 1}}, {"trn2.3xlarge", {1, 0, 0, 0}},
    {"trn2.48xlarge", {16, 4, 2, 1}},  {"trn2u.48xlarge", {16, 4, 2, 1}},
};

TEST_CASE("equal devicegroupK_id <=> one connected group of exactly K, on every shape") {
  for (const topology::Shape& shape : topology::AllShapes()) {
    INFO(shape.instance_type);
    absl::StatusOr<std::vector<ResourceSliceModel>> slices = BuildResourceSlices(Node(shape), {});
    REQUIRE(slices.ok());
    const NodeTopology t = *topology::TopologyForShape(shape);
    std::set<std::string> all_ids;
    for (size_t k = 0; k < kGroupSizes.size(); ++k) {
      const int size = kGroupSizes[k];
      INFO("size " << size);
      const auto groups = MembersById(*slices, size);
      for (const auto& [id, members] : groups) {
        CHECK(static_cast<int>(members.size()) == size);
        CHECK(topology::IsValidDeviceSet(t, std::vector<int>(members.begin(), members.end())));
        CHECK(id.size() <= 64);
        CHECK(all_ids.insert(id).second);  // IDs of different groups (and sizes) never collide
      }
      // Every aligned valid block is published: no device is left out where the model allows.
      int valid_blocks = 0;
      for (int b = 0; (b + 1) * size <= t.devices; ++b) {
        std::vector<int> block;
        for (int i = 0; i < size; ++i) block.push_back(b * size + i);
        valid_blocks += topology::IsValidDeviceSet(t, block) ? 1 : 0;
      }
      CHECK(static_cast<int>(groups.size()) == valid_blocks);
      if (kExpectedGroupCounts.count(shape.instance_type) != 0) {
        CHECK(static_cast<int>(groups.size()) == kExpectedGroupCounts[shape.instance_type][k]);
      }
    }
  }
}

TEST_CASE("trn torus groups are rows, halves and the whole node") {
  const auto slices = *BuildResourceSlices(Node(*topology::FindShape("trn2.48xlarge")), {});
  std::set<std::set<int>> fours, eights;
  for (const auto& [id, m] : MembersById(slices, 4)) fours.insert(m);
  for (const auto& [id, m] : MembersById(slices, 8)) eights.insert(m);
  CHECK(fours ==
        std::set<std::set<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}});
  CHECK(eights ==
        std::set<std::set<int>>{{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}});
  const SliceDevice& d6 = slices[0].devices[6];
  CHECK(d6.attributes.at("topology_x").int_value == 2);
  CHECK(d6.attributes.at("topology_y").int_value == 1);
  CHECK(d6.attributes.at("topology4_id").int_value == 1);
  CHECK(d6.attributes.at("topology8_id").int_value == 0);
}

TEST_CASE("inf2.24xlarge chain: devices 4 and 5 belong to no group of 4") {
  const auto slices = *BuildResourceSlices(Node(*topology::FindShape("inf2.24xlarge")), {});
  for (int d : {4, 5}) {
    CHECK(slices[0].devices[d].attributes.count(DeviceGroupAttribute(4)) == 0);
    CHECK(slices[0].devices[d].attributes.count("topology4_id") == 0);
    CHECK(slices[0].devices[d].attributes.count(DeviceGroupAttribute(1)) == 1);
  }
}

TEST_CASE("an irregular link graph only yields the blocks that are connected") {
  // 8 devices; 0-1 and 2-3 linked but 1-2 not: {0..3} is not connected, {4..7} is a path.
  const NodeTopology t = topology::TopologyFromLinks(
      topology::Family::kTrainium, 2, {{1}, {0}, {3}, {2}, {5}, {4, 6}, {5, 7}, {6}});
  const DeviceGroups groups(t, "n", {});
  CHECK(groups.Find(4, 0) == nullptr);
  REQUIRE(groups.Find(4, 5) != nullptr);
  CHECK(groups.Find(4, 5)->members == std::vector<int>{4, 5, 6, 7});
  // All devices of a node always form a valid set in the model, linked or not.
  CHECK(groups.Find(8, 0) != nullptr);
}

TEST_CASE("IDs are deterministic per node and differ between nodes") {
  const NodeTopology t = *topology::TopologyForShape(*topology::FindShape("trn1.32xlarge"));
  const DeviceGroups a(t, "node-a", {}), a2(t, "node-a", {}), b(t, "node-b", {});
  for (size_t i = 0; i < a.all().size(); ++i) {
    CHECK(a.all()[i].id == a2.all()[i].id);
    CHECK(a.all()[i].id != b.all()[i].id);
    CHECK(a.all()[i].id.size() == 16);
  }
}

TEST_CASE("with the EFA pairing known, IDs are the ones AWS's EFA driver derives") {
  const NodeTopology t = *topology::TopologyForShape(*topology::FindShape("trn2.48xlarge"));
  std::map<int, std::string> efa;
  for (int d = 0; d < 16; ++d) efa[d] = "0000:" + std::to_string(10 + d) + ":00.0";
  const DeviceGroups g(t, "n", efa);
  CHECK(g.Find(1, 3)->id == "0000:13:00.0");
  // Sorted, distinct addresses joined by ",", SHA-256, first 16 hex digits.
  CHECK(g.Find(4, 5)->id ==
        Sha256Hex("0000:14:00.0,0000:15:00.0,0000:16:00.0,0000:17:00.0").substr(0, 16));

  SECTION("two devices sharing one EFA (trn1 pairs 2:1): size 1 falls back to node IDs") {
    std::map<int, std::string> shared;
    for (int d = 0; d < 16; ++d) shared[d] = "0000:" + std::to_string(10 + d / 2) + ":00.0";
    const DeviceGroups s(t, "n", shared);
    CHECK(s.Find(1, 0)->id != s.Find(1, 1)->id);
    CHECK(s.Find(1, 0)->id != "0000:10:00.0");
    CHECK(s.Find(4, 0)->id == Sha256Hex("0000:10:00.0,0000:11:00.0").substr(0, 16));
  }
  SECTION("a device without a paired EFA: node IDs for every size it is in") {
    efa.erase(7);
    const DeviceGroups s(t, "n", efa);
    CHECK(s.Find(1, 3)->id != "0000:13:00.0");
    CHECK(s.Find(4, 0)->id !=
          Sha256Hex("0000:10:00.0,0000:11:00.0,0000:12:00.0,0000:13:00.0").substr(0, 16));
  }
}

TEST_CASE("group IDs are the ones AWS's EFA driver derives (pinned)") {
  // Literal values: a change of hash implementation must not move any ID a claim may match on.
  CHECK(Sha256Hex("0000:10:00.0,0000:11:00.0").substr(0, 16) == "b01c98eb525181ea");
  CHECK(Sha256Hex("0000:10:00.0,0000:11:00.0,0000:12:00.0,0000:13:00.0").substr(0, 16) ==
        "225a5662480300c3");
}

}  // namespace
}  // namespace neuron::dra
