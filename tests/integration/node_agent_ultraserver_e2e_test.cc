// File: tests/integration/node_agent_ultraserver_e2e_test.cc
// End to end: four real neuron-node-agent processes, each an emulated trn2u.48xlarge node of
// one UltraServer (--emulate-ultraserver=us-a:0..3), and a trn1 node, against the fake
// kube-apiserver reached through a kubeconfig. Each Node gets exactly AWS's labels with the
// right values (all four share server-id-4, the pairs 0,1 and 2,3 share server-id-2), the trn1
// Node none; the driver's "busy" keeps the labels, an empty mode list removes them, and the
// flag is refused, in one line, where it does not apply.
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "catch2/catch.hpp"
#include "nlohmann/json.hpp"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/testing/http_get.h"
#include "tests/testing/promtool.h"
#include "tests/testing/subprocess.h"

namespace neuron {
namespace {

using nlohmann::json;
using testing::BinaryPath;
using testing::Eventually;
using testing::Subprocess;
using Labels = std::map<std::string, std::string>;

constexpr absl::Duration kWait = absl::Seconds(30);
constexpr char kPrefix[] = "neuron.amazonaws.com/ultraserver-";

struct UltraTempDir {
  std::string path;
  UltraTempDir() {
    const char* base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    std::string t = std::string(base) + "/agent-us-e2e-XXXXXX";
    if (mkdtemp(t.data()) != nullptr) path = t;
  }
  ~UltraTempDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

void WriteKubeconfig(const std::string& path, const std::string& server) {
  std::ofstream f(path);
  f << "apiVersion: v1\nkind: Config\ncurrent-context: e2e\n"
    << "clusters:\n- name: fake\n  cluster:\n    server: " << server << "\n"
    << "users:\n- name: agent\n  user:\n    token: e2e-token\n"
    << "contexts:\n- name: e2e\n  context:\n    cluster: fake\n    user: agent\n";
}

// The node's labels under neuron.amazonaws.com/ultraserver-.
Labels UltraServerLabels(const fakes::FakeApiServer& api, const std::string& node) {
  const json obj = api.Get("/api/v1/nodes/" + node);
  Labels out;
  if (!obj.is_object()) return out;
  auto labels = obj.at("metadata").find("labels");
  if (labels == obj.at("metadata").end()) return out;
  for (const auto& [k, v] : labels->items()) {
    if (k.rfind(kPrefix, 0) == 0) out[k] = v.get<std::string>();
  }
  return out;
}

std::string L(const std::string& suffix) { return kPrefix + suffix; }

int AgentPort(const Subprocess& agent) {
  const std::string log = agent.WaitForLog("node agent ready", kWait);
  std::smatch m;
  static const std::regex kPort("listening address=127\\.0\\.0\\.1:([0-9]+)");
  if (!std::regex_search(log, m, kPort)) return -1;
  int port = -1;
  return absl::SimpleAtoi(m[1].str(), &port) ? port : -1;
}

struct Cluster {
  UltraTempDir tmp;
  fakes::FakeApiServer api;
  std::string kubeconfig;
  std::vector<std::unique_ptr<Subprocess>> agents;

  Cluster() {
    REQUIRE_FALSE(tmp.path.empty());
    REQUIRE(api.Start().ok());
    kubeconfig = tmp.path + "/kubeconfig";
    WriteKubeconfig(kubeconfig, api.url());
  }
  Subprocess& Start(const std::string& node, const std::string& emulate,
                    const std::string& ultraserver) {
    REQUIRE(
        api.Put("/api/v1/nodes/" + node,
                {{"apiVersion", "v1"},
                 {"kind", "Node"},
                 {"metadata", {{"name", node}, {"labels", {{"kubernetes.io/hostname", node}}}}}})
            .ok());
    std::vector<std::string> argv = {BinaryPath("neuron-node-agent"),
                                     "--emulate=" + emulate,
                                     "--emulate-dir=" + Root(node),
                                     "--kubeconfig=" + kubeconfig,
                                     "--node-name=" + node,
                                     "--listen=127.0.0.1:0",
                                     "--interval=200ms",
                                     "--health-interval=1s"};
    if (!ultraserver.empty()) argv.push_back("--emulate-ultraserver=" + ultraserver);
    agents.push_back(std::make_unique<Subprocess>(argv, tmp.path + "/" + node + ".log"));
    REQUIRE(agents.back()->started());
    return *agents.back();
  }
  std::string Root(const std::string& node) const { return tmp.path + "/" + node; }
  void WriteMode(const std::string& node, const std::string& body) const {
    std::ofstream(Root(node) + "/sys/class/neuron_device/ultraserver_mode") << body;
  }
};

TEST_CASE("four agents of one emulated UltraServer label their Nodes as AWS does", "[e2e]") {
  Cluster c;
  for (int n = 0; n < 4; ++n) {
    c.Start(absl::StrCat("us-", n), "trn2u.48xlarge", "us-a:" + std::to_string(n));
  }
  Subprocess& trn1 = c.Start("trn1-node", "trn1.32xlarge", "");
  for (const auto& a : c.agents) {
    INFO(a->Log());
    REQUIRE(AgentPort(*a) > 0);
  }

  std::vector<Labels> us(4);
  for (int n = 0; n < 4; ++n) {
    const std::string node = absl::StrCat("us-", n);
    INFO(c.agents[n]->Log());
    REQUIRE(Eventually([&] { return UltraServerLabels(c.api, node).size() == 5; }, kWait));
    us[n] = UltraServerLabels(c.api, node);
    CHECK(us[n].at(L("mode")) == "1_2_4");
    CHECK(us[n].at(L("node-id-4")) == std::to_string(n));
    CHECK(us[n].at(L("node-id-2")) == std::to_string(n % 2));
    CHECK(std::regex_match(us[n].at(L("server-id-4")), std::regex("[0-9a-f]{16}")));
    CHECK(c.api.Get("/api/v1/nodes/" + node)["metadata"]["labels"]["kubernetes.io/hostname"] ==
          node);
  }
  for (int n = 1; n < 4; ++n) CHECK(us[n].at(L("server-id-4")) == us[0].at(L("server-id-4")));
  CHECK(us[1].at(L("server-id-2")) == us[0].at(L("server-id-2")));
  CHECK(us[3].at(L("server-id-2")) == us[2].at(L("server-id-2")));
  CHECK(us[2].at(L("server-id-2")) != us[0].at(L("server-id-2")));
  CHECK(us[0].at(L("server-id-2")) != us[0].at(L("server-id-4")));

  // The trn1 node: its one patch at start sets nothing.
  REQUIRE(Eventually([&] { return c.api.RequestCount("PATCH", "/nodes/trn1-node") == 1; }, kWait));
  CHECK(UltraServerLabels(c.api, "trn1-node").empty());
  CHECK(testing::HttpGet(AgentPort(trn1), "/metrics").body.find("neuron_ultraserver_info") ==
        std::string::npos);

  // The identity as a metric, valid exposition.
  const std::string metrics = testing::HttpGet(AgentPort(*c.agents[3]), "/metrics").body;
  CHECK(metrics.find(absl::StrCat("neuron_ultraserver_info{modes=\"1_2_4\",server_id_4=\"",
                                  us[3].at(L("server-id-4")), "\",node_id_4=\"3\",server_id_2=\"",
                                  us[3].at(L("server-id-2")), "\",node_id_2=\"1\"} 1")) !=
        std::string::npos);
  const absl::Status promtool = testing::PromtoolCheck(metrics);
  INFO(promtool.message());
  CHECK(promtool.ok());

  // The driver's election runs on node 3: its labels stay, nothing is patched.
  const size_t patches = c.api.RequestCount("PATCH", "/nodes/us-3");
  c.WriteMode("us-3", "busy\n");
  CHECK(!c.agents[3]->WaitForLog("UltraServer identity unavailable", kWait).empty());
  absl::SleepFor(absl::Milliseconds(600));  // three scans
  CHECK(UltraServerLabels(c.api, "us-3") == us[3]);
  CHECK(c.api.RequestCount("PATCH", "/nodes/us-3") == patches);

  // Node 3 leaves the UltraServer: its labels go, the others keep theirs.
  c.WriteMode("us-3", "\n");
  CHECK(Eventually([&] { return UltraServerLabels(c.api, "us-3").empty(); }, kWait));
  CHECK(UltraServerLabels(c.api, "us-2") == us[2]);
  CHECK(c.api.Get("/api/v1/nodes/us-3")["metadata"]["labels"]["kubernetes.io/hostname"] == "us-3");

  // And comes back.
  c.WriteMode("us-3", "1,2,4\n");
  CHECK(Eventually([&] { return UltraServerLabels(c.api, "us-3") == us[3]; }, kWait));
  for (auto& a : c.agents) CHECK(a->Terminate() == 0);
}

// Runs `argv` to its end; its exit code and log.
std::pair<int, std::string> RunToEnd(const std::vector<std::string>& argv, const std::string& log) {
  Subprocess p(argv, log);
  Eventually([&] { return !p.Running(); }, kWait);
  const int code = p.Terminate();
  return {code, p.Log()};
}

TEST_CASE("--emulate-ultraserver is refused in one line where it does not apply", "[e2e]") {
  UltraTempDir tmp;
  const std::string agent = BinaryPath("neuron-node-agent");
  auto [code, log] =
      RunToEnd({agent, "--emulate=trn1.32xlarge", "--emulate-ultraserver=us-a:1"}, tmp.path + "/a");
  CHECK(code == 2);
  CHECK(log ==
        "neuron-node-agent: --emulate-ultraserver needs --emulate=trn2u.48xlarge (the UltraServer "
        "node type), not --emulate=trn1.32xlarge\n");
  std::tie(code, log) = RunToEnd({agent, "--emulate-ultraserver=us-a:1"}, tmp.path + "/b");
  CHECK(code == 2);
  CHECK(log ==
        "neuron-node-agent: --emulate-ultraserver needs --emulate=trn2u.48xlarge (the UltraServer "
        "node type), and --emulate is not set\n");
  std::tie(code, log) = RunToEnd(
      {agent, "--emulate=trn2u.48xlarge", "--emulate-ultraserver=us-a:9"}, tmp.path + "/c");
  CHECK(code == 2);
  CHECK(log.rfind("neuron-node-agent: --emulate-ultraserver=\"us-a:9\": the node must be", 0) == 0);
  CHECK(std::count(log.begin(), log.end(), '\n') == 1);

  const std::string plugin = BinaryPath("neuron-device-plugin");
  std::tie(code, log) = RunToEnd(
      {plugin, "--emulate=trn1.32xlarge", "--emulate-ultraserver=us-a:1"}, tmp.path + "/d");
  CHECK(code == 2);
  CHECK(log ==
        "neuron-device-plugin: --emulate-ultraserver needs --emulate=trn2u.48xlarge (the "
        "UltraServer node type), not --emulate=trn1.32xlarge\n");
  std::tie(code, log) =
      RunToEnd({plugin, "--api=dra", "--emulate=trn2.48xlarge", "--emulate-ultraserver=us-a:1"},
               tmp.path + "/e");
  CHECK(code == 2);
  CHECK(log ==
        "neuron-device-plugin: --emulate-ultraserver needs --emulate=trn2u.48xlarge (the "
        "UltraServer node type), not --emulate=trn2.48xlarge\n");
}

}  // namespace
}  // namespace neuron
