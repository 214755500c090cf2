// File: tests/dra/node_extras_test.cc
// NodeExtras: the UltraServer identity from the class attributes (the last good one kept while
// the Neuron driver is busy, none before: Unavailable) and the network node layers from the
// Node's labels on the fake apiserver (the last ones kept when the Node cannot be read).
#include "lib/dra/node_extras.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>

#include "lib/dra/node_labels.h"
#include "lib/k8s/transport.h"
#include "lib/ultraserver/emulation.h"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/sysfs/temp_dir.h"

namespace neuron::dra {
namespace {

using nlohmann::json;

void WriteClass(const std::string& root, const std::map<std::string, std::string>& files) {
  const auto dir = std::filesystem::path(root) / ultraserver::kClassDir;
  std::filesystem::create_directories(dir);
  for (const auto& [name, body] : files) {
    std::ofstream(dir / name, std::ios::trunc) << body;
  }
}

json NodeObject(const json& labels) {
  return {
      {"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n1"}, {"labels", labels}}}};
}

TEST_CASE("network node layers come from the Node's topology.k8s.aws labels", "[dra][extras]") {
  CHECK(NetworkNodeLayers(NodeObject({{"topology.k8s.aws/network-node-layer-1", "nn-a"},
                                      {"topology.k8s.aws/network-node-layer-3", "nn-c"},
                                      {"topology.k8s.aws/network-node-layer-4", "nn-d"}})) ==
        std::array<std::string, 3>{"nn-a", "", "nn-c"});
  CHECK(NetworkNodeLayers(json::object()) == std::array<std::string, 3>{});
  CHECK(NetworkNodeLayers(NodeObject({{"topology.k8s.aws/network-node-layer-1", 7}})) ==
        std::array<std::string, 3>{});
}

TEST_CASE("NodeExtras fills identity and layers, keeping the last good ones", "[dra][extras]") {
  sysfs::testing::TempDir dir;
  fakes::FakeApiServer fake;
  REQUIRE(fake.Start().ok());
  k8s::ClientConfig cfg;
  cfg.server = fake.url();
  auto transport = k8s::NewHttpTransport(cfg);
  REQUIRE(transport.ok());
  k8s::RestClient client(*transport);
  auto fs = sysfs::MakeRootedFs(dir.path());
  NodeExtras extras(*fs, client, "n1");

  WriteClass(dir.path(), {{"ultraserver_mode", "busy\n"}});
  NodeDeviceInfo info;
  CHECK(absl::IsUnavailable(extras.Fill(info)));  // nothing known yet: the worker retries

  auto node = ultraserver::ParseEmulatedNode("us-b:3");
  REQUIRE(node.ok());
  WriteClass(dir.path(), ultraserver::EmulatedClassAttributes(*node));
  REQUIRE(fake.Put("/api/v1/nodes/n1",
                   NodeObject({{"topology.k8s.aws/network-node-layer-2", "nn-spine"}}))
              .ok());
  REQUIRE(extras.Fill(info).ok());
  REQUIRE(info.ultraserver.has_value());
  CHECK(info.ultraserver->MemberOf(4)->node_id == 3);
  CHECK(info.network_node_layers == std::array<std::string, 3>{"", "nn-spine", ""});
  CHECK(extras.UltraServer().identity == info.ultraserver);

  // Busy again and the Node unreadable: the last identity and layers stay.
  WriteClass(dir.path(), {{"ultraserver_mode", "busy\n"}});
  fake.InjectError("GET", "/api/v1/nodes/n1", 403);
  NodeDeviceInfo again;
  REQUIRE(extras.Fill(again).ok());
  CHECK(again.ultraserver == info.ultraserver);
  CHECK(again.network_node_layers == info.network_node_layers);
  CHECK(absl::IsUnavailable(extras.UltraServer().status));

  // Garbage is no UltraServer, not an error: the ordinary devices are still published.
  WriteClass(dir.path(), {{"ultraserver_mode", "x,y\n"}});
  NodeDeviceInfo garbage;
  REQUIRE(extras.Fill(garbage).ok());
  CHECK_FALSE(garbage.ultraserver.has_value());
}

}  // namespace
}  // namespace neuron::dra
