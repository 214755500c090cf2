#include "catch2/catch.hpp"
#include "lib/ultraserver/labels.h"
#include "lib/ultraserver/runtime_env.h"

namespace neuron::ultraserver {
namespace {

Identity Trn2u(int node4) {
  Identity i;
  i.modes = {1, 2, 4};
  i.server_id_4 = "bog79p1y8tetj5uu";
  i.node_id_4 = node4;
  i.server_id_2 = node4 < 2 ? "u5wy80u0o2saugxy" : "ygml2651y0lwdd46";
  i.node_id_2 = node4 % 2;
  return i;
}

TEST_CASE("labels carry AWS's keys and values and read back", "[ultraserver]") {
  const LabelList labels = IdentityLabels(Trn2u(2));
  const LabelList want = {
      {"neuron.amazonaws.com/ultraserver-mode", "1_2_4"},
      {"neuron.amazonaws.com/ultraserver-server-id-2", "ygml2651y0lwdd46"},
      {"neuron.amazonaws.com/ultraserver-node-id-2", "0"},
      {"neuron.amazonaws.com/ultraserver-server-id-4", "bog79p1y8tetj5uu"},
      {"neuron.amazonaws.com/ultraserver-node-id-4", "2"},
  };
  CHECK(labels == want);
  std::map<std::string, std::string> m(labels.begin(), labels.end());
  auto back = IdentityFromLabels(m);
  REQUIRE(back);
  CHECK(*back == Trn2u(2));

  m.erase("neuron.amazonaws.com/ultraserver-node-id-4");  // half a set: that size is gone
  back = IdentityFromLabels(m);
  REQUIRE(back);
  CHECK(back->SetSizes() == std::vector<int>{1, 2});
  CHECK_FALSE(IdentityFromLabels({{"neuron.amazonaws.com/ultraserver-mode", "9"}}));
  CHECK_FALSE(IdentityFromLabels({}));
  for (const auto& [k, v] : labels) {
    CHECK(std::find(AllLabelKeys().begin(), AllLabelKeys().end(), k) != AllLabelKeys().end());
  }
}

TEST_CASE("runtime env names the mode, ids, rank and rank 0's host", "[ultraserver]") {
  Placement p{*Trn2u(3).MemberOf(4), 3, "node-a"};
  auto env = RuntimeEnv(p);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"NEURON_RT_ULTRASERVER_MODE", "1"},
      {"NEURON_RT_ULTRASERVER_SERVER_ID", "bog79p1y8tetj5uu"},
      {"NEURON_RT_ULTRASERVER_NODE_ID", "3"},
      {"NEURON_GLOBAL_TOPOID", "3"},
      {"NEURON_GLOBAL_TOPOID0_HOST", "node-a"},
  };
  CHECK(env == want);
  Placement one{*Trn2u(1).MemberOf(1), 0, "node-b"};
  env = RuntimeEnv(one);
  CHECK(env[0].second == "4");
  CHECK(env[1].second == "0000000000000000");
  CHECK(env[2].second == "-1");
}

}  // namespace
}  // namespace neuron::ultraserver
