// File: tests/agent/app_ultraserver_test.cc
// The agent App on emulated UltraServer nodes against the fake kube-apiserver: its Node gets
// AWS's labels (and /inventory and /metrics show the identity); a trn1 node gets none and
// --ultraserver-labels=false sends nothing; an UltraServer node without --emulate is refused.
#include <filesystem>
#include <map>
#include <string>

#include "catch2/catch.hpp"
#include "lib/agent/app.h"
#include "lib/k8s/transport.h"
#include "lib/ultraserver/labels.h"
#include "nlohmann/json.hpp"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/sysfs/temp_dir.h"
#include "tests/testing/http_get.h"
#include "tests/testing/subprocess.h"

namespace neuron::agent {
namespace {

using nlohmann::json;
using testing::Eventually;

struct Cluster {
  fakes::FakeApiServer api;
  std::shared_ptr<k8s::RestClient> client;

  Cluster() {
    REQUIRE(api.Start().ok());
    k8s::ClientConfig cfg;
    cfg.server = api.url();
    auto transport = k8s::NewHttpTransport(cfg);
    REQUIRE(transport.ok());
    client = std::make_shared<k8s::RestClient>(*transport);
  }
  void AddNode(const std::string& name) {
    REQUIRE(api.Put("/api/v1/nodes/" + name,
                    {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}}}})
                .ok());
  }
  std::map<std::string, std::string> UltraServerLabels(const std::string& name) const {
    const json node = api.Get("/api/v1/nodes/" + name);
    std::map<std::string, std::string> out;
    auto labels = node.at("metadata").find("labels");
    if (labels == node.at("metadata").end()) return out;
    for (const auto& [k, v] : labels->items()) {
      if (k.rfind(ultraserver::kLabelPrefix, 0) == 0) out[k] = v.get<std::string>();
    }
    return out;
  }
};

AgentOptions Options(const Cluster& c, const std::string& node, const std::string& emulate,
                     const std::string& dir) {
  AgentOptions o;
  o.emulate = emulate;
  o.emulate_dir = dir;
  o.listen = "127.0.0.1:0";
  o.node_name = node;
  o.client = c.client;
  o.health_interval = absl::ZeroDuration();
  return o;
}

TEST_CASE("App labels its Node with the emulated UltraServer identity", "[agent]") {
  Cluster c;
  c.AddNode("us-2");
  sysfs::testing::TempDir dir;
  AgentOptions o = Options(c, "us-2", "trn2u.48xlarge", dir.path() + "/host");
  o.emulate_ultraserver = ultraserver::ParseEmulatedNode("us-a:2").value();
  App app(o, Clock::Real());
  REQUIRE(app.Start().ok());
  REQUIRE(Eventually([&] { return c.UltraServerLabels("us-2").size() == 5; }));
  const auto labels = c.UltraServerLabels("us-2");
  CHECK(labels.at("neuron.amazonaws.com/ultraserver-mode") == "1_2_4");
  CHECK(labels.at("neuron.amazonaws.com/ultraserver-node-id-4") == "2");
  CHECK(labels.at("neuron.amazonaws.com/ultraserver-node-id-2") == "0");
  CHECK(labels.at("neuron.amazonaws.com/ultraserver-server-id-4").size() == 16);

  const json inv = json::parse(testing::HttpGet(app.port(), "/inventory").body);
  CHECK(inv.at("ultraserver").at("labels") == json(labels));
  const std::string metrics = testing::HttpGet(app.port(), "/metrics").body;
  CHECK(metrics.find("neuron_ultraserver_info{modes=\"1_2_4\",server_id_4=\"" +
                     labels.at("neuron.amazonaws.com/ultraserver-server-id-4") +
                     "\",node_id_4=\"2\"") != std::string::npos);
  CHECK(metrics.find("\nneuron_agent_node_label_patch_errors_total 0\n") != std::string::npos);
  app.Stop();
  CHECK(c.api.RequestCount("PATCH", "/api/v1/nodes/us-2") == 1);
}

TEST_CASE("App puts no UltraServer labels on a trn1 node, and none at all when off", "[agent]") {
  Cluster c;
  c.AddNode("trn1");
  c.AddNode("off");
  sysfs::testing::TempDir dir;
  App trn1(Options(c, "trn1", "trn1.32xlarge", dir.path() + "/trn1"), Clock::Real());
  REQUIRE(trn1.Start().ok());
  REQUIRE(Eventually([&] { return c.api.RequestCount("PATCH", "/api/v1/nodes/trn1") == 1; }));
  CHECK(c.UltraServerLabels("trn1").empty());
  const json inv = json::parse(testing::HttpGet(trn1.port(), "/inventory").body);
  CHECK(inv.at("ultraserver").is_null());

  AgentOptions off = Options(c, "off", "trn2u.48xlarge", dir.path() + "/off");
  off.emulate_ultraserver = ultraserver::ParseEmulatedNode("us-a:0").value();
  off.ultraserver_labels = false;
  App app(off, Clock::Real());
  REQUIRE(app.Start().ok());
  absl::SleepFor(absl::Milliseconds(300));
  CHECK(c.api.RequestCount("PATCH", "/api/v1/nodes/off") == 0);
  CHECK(c.UltraServerLabels("off").empty());
}

TEST_CASE("App counts failed label patches in its metrics", "[agent]") {
  Cluster c;  // the Node is never registered: every patch gets 404
  sysfs::testing::TempDir dir;
  AgentOptions o = Options(c, "missing", "trn1.32xlarge", dir.path() + "/host");
  o.interval = absl::Milliseconds(50);
  o.label_backoff = {absl::Milliseconds(10), absl::Milliseconds(20), 2.0, 0.0};
  App app(o, Clock::Real());
  REQUIRE(app.Start().ok());
  CHECK(Eventually([&] {
    const std::string m = testing::HttpGet(app.port(), "/metrics").body;
    return m.find("\nneuron_agent_node_label_patch_errors_total 0\n") == std::string::npos &&
           m.find("\nneuron_agent_node_label_patch_errors_total ") != std::string::npos;
  }));
}

TEST_CASE("App refuses an UltraServer node without an emulated host", "[agent]") {
  AgentOptions o;
  o.listen = "127.0.0.1:0";
  o.emulate_ultraserver = ultraserver::ParseEmulatedNode("us-a:0").value();
  App app(o, Clock::Real());
  const absl::Status s = app.Start();
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(s.message()), Catch::Contains("--emulate=trn2u.48xlarge"));
}

}  // namespace
}  // namespace neuron::agent
