// File: tests/dra/ultraserver_prepare_test.cc
// NodePrepareResources for AWS's UltraServer templates (deploy/dra/examples, configs read from
// the files): the node device hands out the whole node, UltraServerConfig adds the runtime's five
// variables (mode, server id, node id, rank, rank-0 host), unsupported sets and nodes outside an
// UltraServer are clear errors, and the node device never coexists with the node's devices. The
// rank-0 host lookup runs against the fake apiserver's labelled Nodes.
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "lib/dra/cdi_spec.h"
#include "lib/dra/neuron_preparer.h"
#include "lib/dra/ultraserver_peers.h"
#include "lib/k8s/transport.h"
#include "nlohmann/json.hpp"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/sysfs/temp_dir.h"

namespace neuron::dra {
namespace {

using nlohmann::json;
using sysfs::testing::TempDir;

constexpr char kUltraServerNode[] = "us-node-2";

class UltraServerSource final : public ClaimSource {
 public:
  absl::StatusOr<json> Get(const ClaimRef& c) override {
    auto it = claims.find(c.uid);
    if (it == claims.end()) {
      return absl::NotFoundError("no claim " + c.name);
    }
    return it->second;
  }
  std::map<std::string, json> claims;
};

// node_id_4 2 of "bog79p1y8tetj5uu", node_id_2 0 of pair "ygml2651y0lwdd46" (X2H supported).
ultraserver::Identity Trn2uNode() {
  ultraserver::Identity id;
  id.modes = {1, 2, 4};
  id.server_id_4 = "bog79p1y8tetj5uu";
  id.node_id_4 = 2;
  id.server_id_2 = "ygml2651y0lwdd46";
  id.node_id_2 = 0;
  return id;
}

json Json(const YAML::Node& n) {
  if (n.IsMap()) {
    json out = json::object();
    for (const auto& kv : n) {
      out[kv.first.as<std::string>()] = Json(kv.second);
    }
    return out;
  }
  if (n.IsSequence()) {
    json out = json::array();
    for (const auto& v : n) {
      out.push_back(Json(v));
    }
    return out;
  }
  int64_t i = 0;
  if (YAML::convert<int64_t>::decode(n, i)) {
    return i;
  }
  return n.as<std::string>("");
}

// spec.spec.devices.config of the example's ResourceClaimTemplate, as the API stores it.
json ExampleConfig(const std::string& file) {
  const char* src = std::getenv("NEURON_SOURCE_DIR");
  const auto path =
      std::filesystem::path(src != nullptr ? src : "..") / "deploy/dra/examples" / file;
  for (const YAML::Node& doc : YAML::LoadAllFromFile(path.string())) {
    if (doc["kind"].as<std::string>("") == "ResourceClaimTemplate") {
      json config = Json(doc["spec"]["spec"]["devices"]["config"]);
      for (json& c : config) {
        c["source"] = "FromClaim";
      }
      return config;
    }
  }
  FAIL("no ResourceClaimTemplate in " << file);
  return nullptr;
}

json UltraServerClaim(const std::string& uid, const std::string& device,
                      json config = json::array()) {
  json results = json::array({{{"request", "neurons"},
                               {"driver", "neuron.aws.com"},
                               {"pool", kUltraServerNode},
                               {"device", device}}});
  return {{"metadata", {{"namespace", "ml"}, {"name", "claim-" + uid}, {"uid", uid}}},
          {"status",
           {{"allocation",
             {{"devices", {{"results", std::move(results)}, {"config", std::move(config)}}}}}}}};
}

ClaimRef UltraServerRef(const std::string& uid) { return {"ml", "claim-" + uid, uid}; }

struct UltraServerEnv {
  NodeFacts node{16, 8, 2, true, {absl::OkStatus(), Trn2uNode()}};
  TempDir dir;
  UltraServerSource source;
  std::vector<ultraserver::SetMember> lookups;
  Rank0Lookup lookup = [this](const ultraserver::SetMember& m) -> absl::StatusOr<std::string> {
    lookups.push_back(m);
    return std::string("us-node-0");
  };
  std::string cdi_dir() const { return dir.path() + "/cdi"; }
  std::unique_ptr<NeuronPreparer> Make() {
    std::filesystem::create_directories(cdi_dir());
    NeuronPreparerOptions o;
    o.node_name = kUltraServerNode;
    o.cdi_dir = cdi_dir();
    o.checkpoint_path = dir.path() + "/state/checkpoint.json";
    o.node_facts = [this]() -> absl::StatusOr<NodeFacts> { return node; };
    o.rank0_host = lookup;
    auto p = NeuronPreparer::Create(o, source);
    REQUIRE(p.ok());
    return *std::move(p);
  }
  json Spec(const std::string& uid) const {
    std::ifstream in(cdi_dir() + "/" + CdiSpecFileName(uid));
    REQUIRE(in.good());
    return json::parse(in);
  }
  std::vector<std::string> EnvOf(const std::string& uid) const {
    return Spec(uid)["devices"][0]["containerEdits"].value("env", std::vector<std::string>{});
  }
  size_t DeviceNodes(const std::string& uid) const {
    return Spec(uid)["devices"][0]["containerEdits"]["deviceNodes"].size();
  }
};

TEST_CASE("4-node-inference-us: the whole node and the variables of a set of 4", "[dra][us]") {
  UltraServerEnv env;
  env.source.claims["u4"] =
      UltraServerClaim("u4", "neuronnode", ExampleConfig("4-node-inference-us.yaml"));
  auto p = env.Make();
  auto r = p->Prepare({UltraServerRef("u4")});
  REQUIRE(r.at("u4").ok());
  REQUIRE(r.at("u4")->size() == 1);
  CHECK(r.at("u4")->at(0).device == "neuronnode");
  CHECK(env.DeviceNodes("u4") == 16);
  CHECK(env.EnvOf("u4") ==
        std::vector<std::string>{"NEURON_RT_VISIBLE_CORES=0-63", "NEURON_LOGICAL_NC_CONFIG=2",
                                 "NEURON_RT_ULTRASERVER_MODE=1",
                                 "NEURON_RT_ULTRASERVER_SERVER_ID=bog79p1y8tetj5uu",
                                 "NEURON_RT_ULTRASERVER_NODE_ID=2", "NEURON_GLOBAL_TOPOID=2",
                                 "NEURON_GLOBAL_TOPOID0_HOST=us-node-0"});
  REQUIRE(env.lookups.size() == 1);
  CHECK(env.lookups[0].size == 4);
  CHECK(env.lookups[0].server_id == "bog79p1y8tetj5uu");
}

TEST_CASE("2-node-inference-us and us-and-lnc-config: a set of 2, with its LNC", "[dra][us]") {
  UltraServerEnv env;
  env.source.claims["u2"] =
      UltraServerClaim("u2", "neuronnode", ExampleConfig("2-node-inference-us.yaml"));
  env.source.claims["ul"] =
      UltraServerClaim("ul", "neuronnode", ExampleConfig("us-and-lnc-config.yaml"));
  auto p = env.Make();
  REQUIRE(p->Prepare({UltraServerRef("u2")}).at("u2").ok());
  // Node id 0 of its pair: rank 0 is this node, no lookup.
  CHECK(env.EnvOf("u2") ==
        std::vector<std::string>{"NEURON_RT_VISIBLE_CORES=0-63", "NEURON_LOGICAL_NC_CONFIG=2",
                                 "NEURON_RT_ULTRASERVER_MODE=2",
                                 "NEURON_RT_ULTRASERVER_SERVER_ID=ygml2651y0lwdd46",
                                 "NEURON_RT_ULTRASERVER_NODE_ID=0", "NEURON_GLOBAL_TOPOID=0",
                                 "NEURON_GLOBAL_TOPOID0_HOST=us-node-2"});
  CHECK(env.lookups.empty());
  REQUIRE(p->Unprepare({UltraServerRef("u2")}).at("u2").ok());
  REQUIRE(p->Prepare({UltraServerRef("ul")}).at("ul").ok());
  const std::vector<std::string> lnc1 = env.EnvOf("ul");
  REQUIRE(lnc1.size() == 7);
  CHECK(lnc1[0] == "NEURON_RT_VISIBLE_CORES=0-127");  // 16 devices x 8 cores at LNC 1
  CHECK(lnc1[1] == "NEURON_LOGICAL_NC_CONFIG=1");
  CHECK(lnc1[2] == "NEURON_RT_ULTRASERVER_MODE=2");
}

TEST_CASE("a set the node does not support, or no UltraServer at all, is a clear error",
          "[dra][us]") {
  UltraServerEnv env;
  env.node.ultraserver.identity->modes = {4};  // X1 only
  env.source.claims["u4"] =
      UltraServerClaim("u4", "neuronnode", ExampleConfig("4-node-inference-us.yaml"));
  auto p = env.Make();
  absl::Status s = p->Prepare({UltraServerRef("u4")}).at("u4").status();
  CHECK(absl::IsInvalidArgument(s));
  CHECK_THAT(std::string(s.message()),
             Catch::Contains("UltraServerConfig ultraserverMode 4 (a set of 4 node(s)): node "
                             "us-node-2 supports sets of 1 node(s) (runtime modes 4)"));
  CHECK_FALSE(std::filesystem::exists(env.cdi_dir() + "/" + CdiSpecFileName("u4")));
  CHECK(p->PreparedClaims().empty());

  env.node.ultraserver.identity.reset();
  s = p->Prepare({UltraServerRef("u4")}).at("u4").status();
  CHECK(absl::IsFailedPrecondition(s));
  CHECK_THAT(std::string(s.message()),
             Catch::Contains("asks for a set of 4 node(s), but node us-node-2 is not an "
                             "UltraServer node"));

  env.node.ultraserver.status = absl::UnavailableError("node_id_4: busy");
  CHECK(absl::IsUnavailable(p->Prepare({UltraServerRef("u4")}).at("u4").status()));
}

TEST_CASE("no rank-0 node found: empty host, the pod still runs", "[dra][us]") {
  UltraServerEnv env;
  env.lookup = [](const ultraserver::SetMember&) -> absl::StatusOr<std::string> {
    return absl::NotFoundError("no node matches");
  };
  env.source.claims["u4"] =
      UltraServerClaim("u4", "neuronnode", ExampleConfig("4-node-inference-us.yaml"));
  auto p = env.Make();
  REQUIRE(p->Prepare({UltraServerRef("u4")}).at("u4").ok());
  CHECK(env.EnvOf("u4").back() == "NEURON_GLOBAL_TOPOID0_HOST=");
}

TEST_CASE("the node device and the node's devices are never prepared together", "[dra][us]") {
  UltraServerEnv env;
  env.source.claims["dev"] = UltraServerClaim("dev", "neurondevice3-core1");
  env.source.claims["node"] =
      UltraServerClaim("node", "neuronnode", ExampleConfig("4-node-inference-us.yaml"));
  auto p = env.Make();
  REQUIRE(p->Prepare({UltraServerRef("dev")}).at("dev").ok());
  absl::Status s = p->Prepare({UltraServerRef("node")}).at("node").status();
  CHECK(absl::IsUnavailable(s));
  CHECK_THAT(std::string(s.message()),
             Catch::Contains("device neuronnode is still prepared for ResourceClaim ml/claim-dev"));
  CHECK_THAT(std::string(s.message()), Catch::Contains("stands for every device of the node"));
  REQUIRE(p->Unprepare({UltraServerRef("dev")}).at("dev").ok());
  REQUIRE(p->Prepare({UltraServerRef("node")}).at("node").ok());
  s = p->Prepare({UltraServerRef("dev")}).at("dev").status();
  CHECK(absl::IsUnavailable(s));
  CHECK_THAT(std::string(s.message()), Catch::Contains("(neuronnode)"));
}

TEST_CASE("the rank-0 node is found by AWS's node labels through the API", "[dra][us][api]") {
  fakes::FakeApiServer fake;
  REQUIRE(fake.Start().ok());
  auto node = [&](const std::string& name, const json& labels) {
    REQUIRE(fake.Put("/api/v1/nodes/" + name, {{"apiVersion", "v1"},
                                               {"kind", "Node"},
                                               {"metadata", {{"name", name}, {"labels", labels}}}})
                .ok());
  };
  const std::string s4 = "neuron.amazonaws.com/ultraserver-server-id-4";
  const std::string n4 = "neuron.amazonaws.com/ultraserver-node-id-4";
  node("us-a-0", {{s4, "aaaa"}, {n4, "0"}});
  node("us-a-1", {{s4, "aaaa"}, {n4, "1"}});
  node("us-b-0", {{s4, "bbbb"}, {n4, "0"}});
  node("plain", json::object());
  k8s::ClientConfig cfg;
  cfg.server = fake.url();
  auto transport = k8s::NewHttpTransport(cfg);
  REQUIRE(transport.ok());
  k8s::RestClient client(*transport);
  const ultraserver::SetMember a{4, "aaaa", 1, ultraserver::Mode::kX4};
  CHECK(Rank0Selector(a) == s4 + "=aaaa," + n4 + "=0");
  auto host = FindRank0Host(client, a);
  REQUIRE(host.ok());
  CHECK(*host == "us-a-0");
  CHECK(*FindRank0Host(client, {4, "bbbb", 3, ultraserver::Mode::kX4}) == "us-b-0");
  CHECK(absl::IsNotFound(FindRank0Host(client, {4, "cccc", 2, ultraserver::Mode::kX4}).status()));
  CHECK(absl::IsNotFound(FindRank0Host(client, {2, "aaaa", 1, ultraserver::Mode::kX2H}).status()));
}

}  // namespace
}  // namespace neuron::dra
