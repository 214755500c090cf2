// File: tests/agent/node_label_publisher_test.cc
// AWS's UltraServer labels on the agent's Node: the merge patch sets the identity's labels and
// nulls the other UltraServer keys; NodeLabelPublisher against the fake kube-apiserver patches
// once per change (never for an unchanged identity), removes the labels when the identity goes,
// leaves other labels alone and retries a refused patch with backoff.
#include "lib/agent/node_label_publisher.h"

#include <map>
#include <string>

#include "catch2/catch.hpp"
#include "lib/agent/ultraserver_labels.h"
#include "lib/k8s/transport.h"
#include "lib/ultraserver/labels.h"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/testing/subprocess.h"

namespace neuron::agent {
namespace {

using nlohmann::json;
using testing::Eventually;

constexpr char kNodePath[] = "/api/v1/nodes/us-node";

ultraserver::Identity NodeThree() {
  ultraserver::Identity id;
  id.modes = {1, 2, 4};
  id.server_id_4 = "bog79p1y8tetj5uu";
  id.node_id_4 = 3;
  id.server_id_2 = "ygml2651y0lwdd46";
  id.node_id_2 = 1;
  return id;
}

std::map<std::string, std::string> Labels(const fakes::FakeApiServer& api) {
  const json node = api.Get(kNodePath);
  std::map<std::string, std::string> out;
  auto labels = node.at("metadata").find("labels");
  if (labels == node.at("metadata").end()) return out;
  for (const auto& [k, v] : labels->items()) out[k] = v.get<std::string>();
  return out;
}

struct Fixture {
  fakes::FakeApiServer api;
  std::shared_ptr<k8s::RestClient> client;

  Fixture() {
    REQUIRE(api.Start().ok());
    k8s::ClientConfig cfg;
    cfg.server = api.url();
    auto transport = k8s::NewHttpTransport(cfg);
    REQUIRE(transport.ok());
    client = std::make_shared<k8s::RestClient>(*transport);
  }
  void PutNode() {
    REQUIRE(api.Put(kNodePath,
                    {{"apiVersion", "v1"},
                     {"kind", "Node"},
                     {"metadata",
                      {{"name", "us-node"}, {"labels", {{"kubernetes.io/hostname", "us-node"}}}}}})
                .ok());
  }
  NodeLabelPublisherOptions Options() const {
    NodeLabelPublisherOptions o;
    o.node_name = "us-node";
    o.backoff = {absl::Milliseconds(20), absl::Milliseconds(100), 2.0, 0.0};
    return o;
  }
};

TEST_CASE("the label patch sets the identity's labels and nulls the rest", "[agent]") {
  const json patch = UltraServerLabelPatch(NodeThree());
  const json& labels = patch.at("metadata").at("labels");
  CHECK(labels.size() == ultraserver::AllLabelKeys().size());
  CHECK(labels.at("neuron.amazonaws.com/ultraserver-mode") == "1_2_4");
  CHECK(labels.at("neuron.amazonaws.com/ultraserver-server-id-4") == "bog79p1y8tetj5uu");
  CHECK(labels.at("neuron.amazonaws.com/ultraserver-node-id-4") == "3");
  CHECK(labels.at("neuron.amazonaws.com/ultraserver-server-id-2") == "ygml2651y0lwdd46");
  CHECK(labels.at("neuron.amazonaws.com/ultraserver-node-id-2") == "1");

  ultraserver::Identity x4_only = NodeThree();
  x4_only.modes = {1};  // no pairs: the size-2 labels go
  const json x4 = UltraServerLabelPatch(x4_only).at("metadata").at("labels");
  CHECK(x4.at("neuron.amazonaws.com/ultraserver-mode") == "1");
  CHECK(x4.at("neuron.amazonaws.com/ultraserver-server-id-4") == "bog79p1y8tetj5uu");
  CHECK(x4.at("neuron.amazonaws.com/ultraserver-server-id-2").is_null());
  CHECK(x4.at("neuron.amazonaws.com/ultraserver-node-id-2").is_null());

  const json none = UltraServerLabelPatch(std::nullopt).at("metadata").at("labels");
  CHECK(none.size() == ultraserver::AllLabelKeys().size());
  for (const auto& [key, value] : none.items()) CHECK(value.is_null());
  CHECK(DescribeUltraServerLabels(std::nullopt) == "none");
  CHECK_THAT(DescribeUltraServerLabels(NodeThree()),
             Catch::Contains("neuron.amazonaws.com/ultraserver-node-id-4=3"));
}

TEST_CASE("the publisher patches on change only, and removes the labels", "[agent]") {
  Fixture f;
  f.PutNode();
  NodeLabelPublisher pub(f.client, f.Options());
  pub.Set(NodeThree());
  pub.Start();
  REQUIRE(Eventually([&] { return pub.patches() == 1; }));
  std::map<std::string, std::string> labels = Labels(f.api);
  CHECK(labels.at("neuron.amazonaws.com/ultraserver-mode") == "1_2_4");
  CHECK(labels.at("neuron.amazonaws.com/ultraserver-server-id-4") == "bog79p1y8tetj5uu");
  CHECK(labels.at("neuron.amazonaws.com/ultraserver-node-id-4") == "3");
  CHECK(labels.at("neuron.amazonaws.com/ultraserver-server-id-2") == "ygml2651y0lwdd46");
  CHECK(labels.at("neuron.amazonaws.com/ultraserver-node-id-2") == "1");
  CHECK(labels.at("kubernetes.io/hostname") == "us-node");
  CHECK(labels.size() == 6);

  pub.Set(NodeThree());  // unchanged: no request
  absl::SleepFor(absl::Milliseconds(200));
  CHECK(pub.patches() == 1);
  CHECK(f.api.RequestCount("PATCH", kNodePath) == 1);

  pub.Set(std::nullopt);  // no longer an UltraServer node
  REQUIRE(Eventually([&] { return pub.patches() == 2; }));
  labels = Labels(f.api);
  CHECK(labels == std::map<std::string, std::string>{{"kubernetes.io/hostname", "us-node"}});
  pub.Stop();
  pub.Stop();
}

TEST_CASE("a refused or early patch is retried with backoff", "[agent]") {
  Fixture f;
  NodeLabelPublisher pub(f.client, f.Options());
  pub.Set(NodeThree());
  pub.Start();  // the Node does not exist yet (not registered): 404, retried
  REQUIRE(Eventually([&] { return pub.failures() >= 2; }));
  CHECK(pub.patches() == 0);
  f.api.InjectError("PATCH", kNodePath, 403, 2);  // then RBAC not applied yet: 403 twice
  f.PutNode();
  REQUIRE(Eventually([&] { return pub.patches() == 1; }));
  CHECK(Labels(f.api).at("neuron.amazonaws.com/ultraserver-node-id-4") == "3");
}

TEST_CASE("labels someone removed are restored at the next check, others never patched",
          "[agent]") {
  Fixture f;
  f.PutNode();
  NodeLabelPublisherOptions o = f.Options();
  o.check_interval = absl::Milliseconds(30);
  NodeLabelPublisher pub(f.client, o);
  pub.Set(NodeThree());
  pub.Start();
  REQUIRE(Eventually([&] { return pub.patches() == 1; }));
  // Checks read the Node and find it as wanted: no second patch.
  REQUIRE(Eventually([&] { return f.api.RequestCount("GET", kNodePath) >= 3; }));
  CHECK(pub.patches() == 1);

  json drop = {
      {"metadata", {{"labels", {{"neuron.amazonaws.com/ultraserver-node-id-4", nullptr}}}}}};
  REQUIRE(
      f.client->Patch(k8s::resources::kNodes, "", "us-node", k8s::PatchType::kMerge, drop).ok());
  REQUIRE(Eventually([&] { return pub.patches() == 2; }));
  CHECK(Labels(f.api).at("neuron.amazonaws.com/ultraserver-node-id-4") == "3");
}

TEST_CASE("NodeCarries compares a Node with the patch", "[agent]") {
  const json patch = UltraServerLabelPatch(NodeThree());
  json node = {{"metadata", {{"name", "n"}}}};
  CHECK_FALSE(NodeCarries(node, patch));
  json labels = json::object();
  for (const auto& [k, v] : ultraserver::IdentityLabels(NodeThree())) labels[k] = v;
  node["metadata"]["labels"] = labels;
  CHECK(NodeCarries(node, patch));
  node["metadata"]["labels"]["other"] = "x";
  CHECK(NodeCarries(node, patch));
  node["metadata"]["labels"]["neuron.amazonaws.com/ultraserver-node-id-4"] = "2";
  CHECK_FALSE(NodeCarries(node, patch));
  const json none = UltraServerLabelPatch(std::nullopt);
  CHECK_FALSE(NodeCarries(node, none));
  CHECK(NodeCarries({{"metadata", {{"labels", {{"other", "x"}}}}}}, none));
  CHECK(NodeCarries({{"metadata", {{"name", "n"}}}}, none));
}

TEST_CASE("Stop ends a publisher waiting in backoff", "[agent]") {
  Fixture f;
  NodeLabelPublisherOptions o = f.Options();
  o.backoff = {absl::Hours(1), absl::Hours(1), 2.0, 0.0};
  NodeLabelPublisher pub(f.client, o);
  pub.Set(std::nullopt);
  pub.Start();
  REQUIRE(Eventually([&] { return pub.failures() == 1; }));
  const absl::Time start = absl::Now();
  pub.Stop();
  CHECK(absl::Now() - start < absl::Seconds(5));
}

}  // namespace
}  // namespace neuron::agent
