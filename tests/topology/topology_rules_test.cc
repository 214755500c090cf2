// Targeted tests of the documented facts and rules of lib/topology.
#include <set>

#include "catch2/catch.hpp"
#include "lib/topology/topology.h"

namespace neuron::topology {
namespace {

NodeTopology Topo(const char* type, int lnc = 0) {
  const Shape* s = FindShape(type);
  REQUIRE(s != nullptr);
  absl::StatusOr<NodeTopology> t = TopologyForShape(*s, lnc);
  REQUIRE(t.ok());
  return *t;
}

std::vector<bool> FreeExcept(int n, const std::set<int>& used) {
  std::vector<bool> f(n, true);
  for (int u : used) f[u] = false;
  return f;
}

TEST_CASE("pci device ids map to families", "[topology]") {
  for (uint16_t id : {0x7064, 0x7065, 0x7066, 0x7067}) {
    auto m = ModelForPciDevice(id);
    REQUIRE(m.has_value());
    CHECK(m->family == Family::kInferentia);
    CHECK(m->physical_cores == 4);
    CHECK_FALSE(m->lnc_capable);
  }
  CHECK(ModelForPciDevice(0x7164)->family == Family::kTrainium);
  CHECK(ModelForPciDevice(0x7164)->physical_cores == 2);
  CHECK(ModelForPciDevice(0x7264)->family == Family::kInferentia2);
  CHECK(ModelForPciDevice(0x7264)->physical_cores == 2);
  auto trn2 = ModelForPciDevice(0x7364);
  CHECK(trn2->family == Family::kTrainium2);
  CHECK(trn2->physical_cores == 8);
  CHECK(trn2->lnc_capable);
  CHECK(trn2->default_lnc == 2);
  for (uint16_t id : {0x7564, 0x7565}) {
    CHECK(ModelForPciDevice(id)->family == Family::kTrainium3);
    CHECK(ModelForPciDevice(id)->lnc_capable);
  }
  CHECK_FALSE(ModelForPciDevice(0x7068).has_value());
  CHECK_FALSE(ModelForPciDevice(0x0000).has_value());
  CHECK(FamilyName(Family::kInferentia) == "inferentia");
  CHECK(FamilyName(Family::kTrainium) == "trainium");
  CHECK(FamilyName(Family::kInferentia2) == "inferentia2");
  CHECK(FamilyName(Family::kTrainium2) == "trainium2");
  CHECK(FamilyName(Family::kTrainium3) == "trainium3");
  CHECK(kNeuronPciVendor == 0x1d0f);
}

TEST_CASE("every shape of NEURON.md section 4 is known and consistent", "[topology]") {
  const std::vector<std::pair<const char*, int>> want = {
      {"inf1.xlarge", 1},    {"inf1.2xlarge", 1},   {"inf1.6xlarge", 4},    {"inf1.24xlarge", 16},
      {"inf2.xlarge", 1},    {"inf2.8xlarge", 1},   {"inf2.24xlarge", 6},   {"inf2.48xlarge", 12},
      {"trn1.2xlarge", 1},   {"trn1.32xlarge", 16}, {"trn1n.32xlarge", 16}, {"trn2.3xlarge", 1},
      {"trn2.48xlarge", 16}, {"trn2u.48xlarge", 16}};
  CHECK(AllShapes().size() == want.size());
  for (const auto& [type, devices] : want) {
    INFO(type);
    const Shape* s = FindShape(type);
    REQUIRE(s != nullptr);
    CHECK(s->devices == devices);
    CHECK(static_cast<int>(s->links.size()) == devices);
    CHECK(s->devices % s->numa_nodes == 0);
    REQUIRE(ModelForPciDevice(s->pci_device_id).has_value());
    CHECK(ModelForPciDevice(s->pci_device_id)->family == s->family);
    // links are symmetric, in range, without self links
    for (int d = 0; d < devices; ++d) {
      for (int o : s->links[d]) {
        REQUIRE(o >= 0);
        REQUIRE(o < devices);
        CHECK(o != d);
        CHECK(std::count(s->links[o].begin(), s->links[o].end(), d) == 1);
      }
    }
    // The graph read back through TopologyFromLinks is classified as the shape says.
    CHECK(TopologyFromLinks(s->family, 1, s->links).link_kind == s->link_kind);
  }
  CHECK(FindShape("p4d.24xlarge") == nullptr);
  CHECK(FindShape("TRN1.32XLARGE") == nullptr);
}

TEST_CASE("link tables: rings, the inf2.24xlarge chain and the 4x4 torus", "[topology]") {
  auto neighbours = [](const Shape* s, int d) {
    return std::set<int>(s->links[d].begin(), s->links[d].end());
  };
  const Shape* inf2_48 = FindShape("inf2.48xlarge");
  CHECK(inf2_48->link_kind == LinkKind::kRing);
  CHECK(inf2_48->links[0] == std::vector<int>{11, 1});  // driver order
  CHECK(neighbours(inf2_48, 11) == std::set<int>{10, 0});
  const Shape* inf2_24 = FindShape("inf2.24xlarge");
  CHECK(inf2_24->link_kind == LinkKind::kChain);
  CHECK(inf2_24->links[0] == std::vector<int>{1});
  CHECK(inf2_24->links[5] == std::vector<int>{4});
  CHECK(FindShape("inf1.24xlarge")->link_kind == LinkKind::kRing);
  CHECK(neighbours(FindShape("inf1.24xlarge"), 0) == std::set<int>{1, 15});
  for (const char* type : {"trn1.32xlarge", "trn1n.32xlarge", "trn2.48xlarge", "trn2u.48xlarge"}) {
    INFO(type);
    const Shape* s = FindShape(type);
    CHECK(s->link_kind == LinkKind::kTorus2D);
    for (int d = 0; d < 16; ++d) {
      const int row = d / 4 * 4;
      CHECK(neighbours(s, d) ==
            std::set<int>{row + (d + 1) % 4, row + (d + 3) % 4, (d + 4) % 16, (d + 12) % 16});
    }
  }
  // Same grid, different port order (driver tables).
  CHECK(FindShape("trn1.32xlarge")->links[0] == std::vector<int>{12, 3, 4, 1});
  CHECK(FindShape("trn2.48xlarge")->links[0] == std::vector<int>{12, 1, 3, 4});
  for (const char* type : {"inf1.xlarge", "inf2.xlarge", "trn1.2xlarge", "trn2.3xlarge"}) {
    CHECK(FindShape(type)->link_kind == LinkKind::kNone);
  }
}

TEST_CASE("LNC decides logical cores per device", "[topology]") {
  CHECK(Topo("trn2.48xlarge").cores_per_device == 4);  // default LNC=2
  CHECK(Topo("trn2.48xlarge", 2).cores_per_device * 16 == 64);
  CHECK(Topo("trn2.48xlarge", 1).cores_per_device * 16 == 128);
  CHECK(Topo("trn2.3xlarge", 1).cores_per_device == 8);
  CHECK(Topo("trn1.32xlarge").cores_per_device == 2);
  CHECK(Topo("trn1.32xlarge", 1).cores_per_device == 2);
  CHECK(Topo("inf1.6xlarge").cores_per_device == 4);
  const Shape& trn1 = *FindShape("trn1.32xlarge");
  CHECK(TopologyForShape(trn1, 2).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(TopologyForShape(*FindShape("trn2.48xlarge"), 3).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(TopologyForShape(*FindShape("trn2.48xlarge"), -1).status().code() ==
        absl::StatusCode::kInvalidArgument);
  Shape bogus = trn1;
  bogus.pci_device_id = 0x1234;
  CHECK(TopologyForShape(bogus).status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("trn torus: only aligned 1/4/8/16 device sets", "[topology]") {
  const NodeTopology t = Topo("trn1.32xlarge");
  CHECK_FALSE(IsValidDeviceSet(t, {0, 1, 2}));  // count 3 is invalid
  CHECK_FALSE(IsValidDeviceSet(t, {0, 1}));
  CHECK(IsValidDeviceSet(t, {0, 1, 2, 3}));
  CHECK(IsValidDeviceSet(t, {12, 13, 14, 15}));
  CHECK_FALSE(IsValidDeviceSet(t, {1, 2, 3, 4}));   // 4 must be a row
  CHECK_FALSE(IsValidDeviceSet(t, {0, 4, 8, 12}));  // a column is linked but not a row
  CHECK(IsValidDeviceSet(t, {8, 9, 10, 11, 12, 13, 14, 15}));
  CHECK_FALSE(IsValidDeviceSet(t, {4, 5, 6, 7, 8, 9, 10, 11}));
  CHECK(IsValidDeviceSet(t, {7}));
  std::vector<int> all(16);
  for (int i = 0; i < 16; ++i) all[i] = i;
  CHECK(IsValidDeviceSet(t, all));
  CHECK_FALSE(ChooseDevices(t, std::vector<bool>(16, true), 3).has_value());
  CHECK(ChooseDevices(t, std::vector<bool>(16, true), 4) == std::vector<int>{0, 1, 2, 3});
  CHECK(ScoreDevices(t, std::vector<bool>(16, true), 3) == 0);
  // Row 0 has a used device: a 4-device request takes row 1, not a torn row.
  CHECK(ChooseDevices(t, FreeExcept(16, {2}), 4) == std::vector<int>{4, 5, 6, 7});
  // One device goes to the already broken row, keeping {8-15} and row 1 whole.
  CHECK(ChooseDevices(t, FreeExcept(16, {2}), 1) == std::vector<int>{0});
  // 8 devices must be a half; half 0 is broken.
  CHECK(ChooseDevices(t, FreeExcept(16, {2}), 8) == std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15});
  CHECK_FALSE(ChooseDevices(t, FreeExcept(16, {2, 9}), 8).has_value());
}

TEST_CASE("rings: contiguous windows, wrapping allowed; the chain does not wrap", "[topology]") {
  const NodeTopology ring = Topo("inf2.48xlarge");
  CHECK(IsValidDeviceSet(ring, {3, 4, 5}));
  CHECK(IsValidDeviceSet(ring, {10, 11, 0, 1}));  // wraps through the 11-0 link
  CHECK_FALSE(IsValidDeviceSet(ring, {0, 2, 4}));
  CHECK_FALSE(IsValidDeviceSet(ring, {0, 1, 3}));
  // Only the wrapping window {10, 11, 0, 1} is free for 4 devices.
  CHECK(ChooseDevices(ring, FreeExcept(12, {2, 5, 8}), 4) == std::vector<int>{0, 1, 10, 11});

  const NodeTopology chain = Topo("inf2.24xlarge");
  CHECK(IsValidDeviceSet(chain, {0, 1, 2}));
  CHECK_FALSE(IsValidDeviceSet(chain, {5, 0}));  // no 5-0 link
  CHECK_FALSE(IsValidDeviceSet(chain, {4, 5, 0}));
  CHECK_FALSE(ChooseDevices(chain, FreeExcept(6, {2, 3}), 3).has_value());
  CHECK(ChooseDevices(chain, FreeExcept(6, {2}), 3) == std::vector<int>{3, 4, 5});
}

TEST_CASE("best fit keeps the largest free block", "[topology]") {
  const NodeTopology ring = Topo("inf2.48xlarge");
  // Free runs: {0,1} (2 devices) and {4..9} (6 devices). A 2-device request fills the small run.
  const auto free = FreeExcept(12, {2, 3, 10, 11});
  CHECK(ChooseDevices(ring, free, 2) == std::vector<int>{0, 1});
  // A request for 3 must come from the big run; taking its end keeps 3 contiguous.
  CHECK(ChooseDevices(ring, free, 3) == std::vector<int>{4, 5, 6});
  // must_include steers the choice; {7, 8} leaves runs of 3 and 1, better than 2 and 2.
  CHECK(ChooseDevices(ring, free, 2, {7}) == std::vector<int>{7, 8});
  CHECK_FALSE(ChooseDevices(ring, free, 2, {2}).has_value());     // not free
  CHECK_FALSE(ChooseDevices(ring, free, 2, {0, 5}).has_value());  // not connected
  CHECK_FALSE(ChooseDevices(ring, free, 1, {0, 1}).has_value());  // more than count
  CHECK_FALSE(ChooseDevices(ring, free, 2, {0, 0}).has_value());  // duplicate
  CHECK_FALSE(ChooseDevices(ring, free, 0).has_value());
  CHECK_FALSE(ChooseDevices(ring, free, 13).has_value());
  CHECK_FALSE(ChooseDevices(ring, {true, true}, 3).has_value());  // short mask = not free
}

TEST_CASE("cores stay on the fewest linked devices and pack partial devices", "[topology]") {
  const NodeTopology inf1 = Topo("inf1.6xlarge");  // 4 devices x 4 cores, ring
  CHECK(IsValidCoreSet(inf1, {0, 1, 2}));
  CHECK_FALSE(IsValidCoreSet(inf1, {0, 1, 4}));  // 3 cores fit on one device
  CHECK(IsValidCoreSet(inf1, {0, 1, 2, 3, 4}));
  CHECK(IsValidCoreSet(inf1, {3, 12, 13, 14, 15}));  // devices 0 and 3 are ring neighbours
  // Device 1 has one core used: a 3-core request goes there, leaving devices 0, 2, 3 whole.
  CHECK(ChooseCores(inf1, FreeExcept(16, {4}), 3) == std::vector<int>{5, 6, 7});
  // 9 cores need 3 devices (the extender's example: cores 0-8 on devices 0-2 when all free).
  CHECK(ChooseCores(inf1, std::vector<bool>(16, true), 9) ==
        std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8});
  // Every device has 2 free cores: 4 cores cannot be placed on one device.
  CHECK_FALSE(ChooseCores(inf1, FreeExcept(16, {0, 1, 4, 5, 8, 9, 12, 13}), 4).has_value());
  CHECK(ScoreCores(inf1, FreeExcept(16, {0, 1, 4, 5, 8, 9, 12, 13}), 4) == 0);

  const NodeTopology trn1 = Topo("trn1.32xlarge");  // 2 cores per device
  // 6 cores = 3 devices, which must lie in one row and be linked.
  CHECK(IsValidCoreSet(trn1, {0, 1, 2, 3, 4, 5}));
  CHECK(IsValidCoreSet(trn1, {0, 1, 2, 3, 6, 7}));          // devices 0,1,3: 3-0 wraps in the row
  CHECK_FALSE(IsValidCoreSet(trn1, {6, 7, 8, 9, 10, 11}));  // devices 3,4,5 cross rows
  CHECK(ChooseCores(trn1, std::vector<bool>(32, true), 6) == std::vector<int>{0, 1, 2, 3, 4, 5});
  // 10 cores = 5 devices, inside {0-7}; devices {0,1,3,4,6} are not linked (6 is isolated).
  CHECK_FALSE(IsValidCoreSet(trn1, {0, 1, 2, 3, 6, 7, 8, 9, 12, 13}));
  CHECK(IsValidCoreSet(trn1, {0, 1, 2, 3, 6, 7, 8, 9, 10, 11}));

  const NodeTopology trn2_lnc1 = Topo("trn2.48xlarge", 1);
  const NodeTopology trn2_lnc2 = Topo("trn2.48xlarge", 2);
  CHECK(ChooseCores(trn2_lnc1, std::vector<bool>(128, true), 8) ==
        std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(ChooseCores(trn2_lnc2, std::vector<bool>(64, true), 8) ==
        std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});  // 2 devices at LNC=2
  CHECK(ChooseCores(trn2_lnc2, std::vector<bool>(64, true), 64)->size() == 64);
  CHECK_FALSE(ChooseCores(trn2_lnc2, std::vector<bool>(64, true), 65).has_value());
  CHECK(ChooseCores(trn2_lnc1, std::vector<bool>(128, true), 128)->size() == 128);
}

TEST_CASE("scores: 0 when impossible, higher for tighter packing", "[topology]") {
  const NodeTopology t = Topo("trn1.32xlarge");
  const std::vector<bool> all_free(16, true);
  std::vector<bool> half_used = all_free;
  for (int d = 0; d < 8; ++d) half_used[d] = false;
  std::vector<bool> row_left(16, false);
  for (int d = 12; d < 16; ++d) row_left[d] = true;
  const int empty_node = ScoreDevices(t, all_free, 4);
  const int half_node = ScoreDevices(t, half_used, 4);
  const int exact_fit = ScoreDevices(t, row_left, 4);
  CHECK(exact_fit == 10);
  CHECK(half_node > empty_node);
  CHECK(exact_fit > half_node);
  CHECK(empty_node >= 1);
  CHECK(ScoreDevices(t, row_left, 8) == 0);
  // A fragmented ring scores lower than a contiguous one with the same free count.
  const NodeTopology ring = Topo("inf2.48xlarge");
  CHECK(ScoreDevices(ring, FreeExcept(12, {0, 1, 2, 3}), 2) >
        ScoreDevices(ring, FreeExcept(12, {0, 3, 6, 9}), 2));
  // Cores: a fuller node whose partial device absorbs the request scores higher than an empty
  // node; a request that fills the node exactly scores 10.
  const NodeTopology inf2 = Topo("inf2.48xlarge");
  std::vector<bool> mostly_used(24, false);
  for (int c = 1; c < 12; ++c) mostly_used[c] = true;  // core 1 (device 0) + devices 1..5
  CHECK(ChooseCores(inf2, mostly_used, 1) == std::vector<int>{1});
  CHECK(ScoreCores(inf2, mostly_used, 1) > ScoreCores(inf2, std::vector<bool>(24, true), 1));
  CHECK(ScoreCores(inf2, FreeExcept(24, {0, 1, 2}), 21) == 10);
  CHECK(ScoreCores(inf2, std::vector<bool>(24, false), 1) == 0);
}

TEST_CASE("TopologyFromLinks cleans and classifies graphs", "[topology]") {
  auto t = TopologyFromLinks(Family::kInferentia2, 2, {{1, 1, 7, 0}, {}, {3}, {}});
  CHECK(t.devices == 4);
  CHECK(t.links[0] == std::vector<int>{1});  // duplicate, out of range and self link dropped
  CHECK(t.links[1] == std::vector<int>{0});  // made symmetric
  CHECK(t.link_kind == LinkKind::kChain);    // two components: irregular -> connected rule
  CHECK_FALSE(IsValidDeviceSet(t, {0, 2}));
  CHECK(IsValidDeviceSet(t, {0, 1, 2, 3}));  // all devices are always valid
  CHECK(TopologyFromLinks(Family::kTrainium, 2, {{}, {}}).link_kind == LinkKind::kNone);
  CHECK(TopologyFromLinks(Family::kTrainium, 2, {{1}, {0}}).link_kind == LinkKind::kChain);
  CHECK(TopologyFromLinks(Family::kTrainium, 2, {{1, 2}, {0, 2}, {0, 1}}).link_kind ==
        LinkKind::kRing);
  CHECK(TopologyFromLinks(Family::kTrainium3, 8, {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}})
            .link_kind == LinkKind::kAllToAll);
  CHECK(TopologyFromLinks(Family::kTrainium, 2, {}).devices == 0);
  CHECK_FALSE(ChooseDevices(TopologyFromLinks(Family::kTrainium, 2, {}), {}, 1).has_value());
}

}  // namespace
}  // namespace neuron::topology
