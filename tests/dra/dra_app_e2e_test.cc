// File: tests/dra/dra_app_e2e_test.cc
// The DRA driver node process (DraApp) end to end on an emulated trn2.48xlarge: ResourceSlices
// on the fake apiserver, a fault written into the emulated sysfs becoming a taint (gate on) or
// the device leaving the slice (gate off) and recovering, a claim prepared and unprepared
// through the fake kubelet's NodePrepareResources with its CDI file, /readyz and /metrics; and on
// an emulated trn2u.48xlarge UltraServer node (class attributes of "us-a:2"): the neuronnode
// device with its set and network layer attributes, UltraServerConfig claims for sets of 4 and
// 2 prepared with the runtime's variables (rank 0 found among the fake apiserver's Nodes); and
// a claim naming a compile cache, prepared with the cache's directory mounted (a fake
// CacheMounts passed through DraAppOptions).
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "lib/dra/cdi_spec.h"
#include "lib/ultraserver/emulation.h"
#include "nlohmann/json.hpp"
#include "tests/dra/dra_app_env.h"
#include "tests/dra/fake_cache_mounts.h"
#include "tests/sysfs/temp_dir.h"
#include "tests/testing/http_get.h"
#include "tests/testing/subprocess.h"

namespace neuron::dra {
namespace {

using neuron::testing::Eventually;
using neuron::testing::HttpGet;
using nlohmann::json;
using testing::DraAppEnv;

// Writing the emulated tree takes seconds on a loaded machine.
constexpr absl::Duration kStartup = absl::Seconds(60);

bool Tainted(const json& device) {
  return device.is_object() && device.contains("taints") && !device["taints"].empty();
}

TEST_CASE("the DRA driver publishes the emulated node's devices and becomes ready",
          "[dra][app][e2e]") {
  DraAppEnv env;
  REQUIRE(env.Start());
  REQUIRE(Eventually([&] { return env.Slice().is_object(); }, kStartup));
  const json slice = env.Slice();
  CHECK(slice["spec"]["pool"]["name"] == testing::kNode);
  CHECK(slice["spec"]["devices"].size() == 16);
  const json d0 = env.Device("neurondevice0");
  REQUIRE(d0.is_object());
  CHECK(d0["attributes"]["neuronDriverVersion"]["string"] == "2.30.2.0");  // the emulated default
  CHECK(d0["attributes"]["instanceType"]["string"] == "trn2.48xlarge");
  CHECK(env.Device("neuronnode").is_null());                    // no UltraServer node
  CHECK_FALSE(d0["attributes"].contains("networkNodeLayer1"));  // the Node has no such label
  REQUIRE(env.kubelet().WaitForRegistrations(1, kStartup));
  REQUIRE(Eventually([&] { return HttpGet(env.metrics_port(), "/readyz").status == 200; }));
  CHECK(HttpGet(env.metrics_port(), "/healthz").status == 200);
  const std::string metrics = HttpGet(env.metrics_port(), "/metrics").body;
  CHECK_THAT(metrics, Catch::Contains("neuron_dra_slice_publish_total{result=\"ok\"}"));
  CHECK_THAT(metrics, Catch::Contains("neuron_dra_slice_pool_generation 1"));
  REQUIRE(env.Stop().ok());
  CHECK(env.Slice().is_object());  // slices stay across a restart
  CHECK_FALSE(std::filesystem::exists(env.kubelet().plugins_dir() + "/neuron.aws.com/dra.sock"));
}

TEST_CASE("with DRADeviceTaints a fault becomes a NoExecute taint and goes on recovery",
          "[dra][app][e2e]") {
  DraAppEnv env({.device_taints = true});
  REQUIRE(env.Start());
  REQUIRE(Eventually([&] { return env.Device("neurondevice3").is_object(); }, kStartup));
  CHECK_FALSE(Tainted(env.Device("neurondevice3")));
  REQUIRE(env.WriteFault(3, 1));
  REQUIRE(Eventually([&] { return Tainted(env.Device("neurondevice3")); }, absl::Seconds(5)));
  const json taint = env.Device("neurondevice3")["taints"][0];
  CHECK(taint["key"] == "neuron.aws.com/unhealthy");
  CHECK(taint["effect"] == "NoExecute");
  CHECK_FALSE(Tainted(env.Device("neurondevice2")));
  CHECK(env.Slice()["spec"]["pool"]["generation"] == 2);
  // No new fault for healthy_after: the taint goes.
  REQUIRE(Eventually([&] { return !Tainted(env.Device("neurondevice3")); }, absl::Seconds(10)));
}

TEST_CASE("without DRADeviceTaints a faulty device leaves the slice and comes back",
          "[dra][app][e2e]") {
  DraAppEnv env;
  REQUIRE(env.Start());
  REQUIRE(Eventually([&] { return env.Device("neurondevice5").is_object(); }, kStartup));
  REQUIRE(env.WriteFault(5, 1));
  REQUIRE(Eventually([&] { return env.Device("neurondevice5").is_null(); }, absl::Seconds(5)));
  CHECK(env.Slice()["spec"]["devices"].size() == 15);
  REQUIRE(Eventually([&] { return env.Device("neurondevice5").is_object(); }, absl::Seconds(10)));
  CHECK(env.Slice()["spec"]["devices"].size() == 16);
}

json ReadJson(const std::string& path) {
  std::ifstream f(path);
  return json::parse(f, nullptr, /*allow_exceptions=*/false);
}

TEST_CASE("a claim allocated in the API is prepared with its CDI spec and unprepared",
          "[dra][app][e2e]") {
  DraAppEnv env;
  REQUIRE(env.Start());
  REQUIRE(env.kubelet().WaitForRegistrations(1, kStartup));
  const std::string uid = env.CreateClaim("claim-a", "neurondevice2");
  REQUIRE_FALSE(uid.empty());

  auto prepared =
      env.kubelet().NodePrepareResources("neuron.aws.com", {{"default", "claim-a", uid}});
  REQUIRE(prepared.ok());
  const fakes::DraPrepared& p = prepared->at(uid);
  REQUIRE(p.error.empty());
  REQUIRE(p.devices.size() == 1);
  CHECK(p.devices[0].device == "neurondevice2");
  CHECK(p.devices[0].pool == testing::kNode);
  CHECK(p.devices[0].cdi_device_ids == std::vector<std::string>{CdiDeviceId(uid)});

  const std::string file = env.cdi_root() + "/" + CdiSpecFileName(uid);
  REQUIRE(std::filesystem::exists(file));
  const json spec = ReadJson(file);
  const json& edits = spec["devices"][0]["containerEdits"];
  REQUIRE(edits["deviceNodes"].size() == 1);
  CHECK(edits["deviceNodes"][0]["path"] == "/dev/neuron2");
  CHECK(edits["deviceNodes"][0]["hostPath"] == "/dev/null");
  CHECK_THAT(edits["env"].dump(), Catch::Contains("NEURON_RT_VISIBLE_CORES="));
  CHECK(std::filesystem::exists(env.dir() + "/state/checkpoint.json"));
  CHECK_THAT(HttpGet(env.metrics_port(), "/metrics").body,
             Catch::Contains("neuron_dra_prepared_claims 1"));

  auto unprepared =
      env.kubelet().NodeUnprepareResources("neuron.aws.com", {{"default", "claim-a", uid}});
  REQUIRE(unprepared.ok());
  CHECK(unprepared->at(uid).empty());
  CHECK_FALSE(std::filesystem::exists(file));
}

TEST_CASE("a claim naming a compile cache gets devices and cache through one claim",
          "[dra][app][e2e][cache]") {
  sysfs::testing::TempDir cache_dir;
  testing::FakeCacheMounts mounts(cache_dir.path());
  testing::DraAppEnvOptions opts;
  opts.cache_mounts = &mounts;
  DraAppEnv env(opts);
  REQUIRE(env.Start());
  REQUIRE(env.kubelet().WaitForRegistrations(1, kStartup));
  const json config = json::array({{{"source", "FromClaim"},
                                    {"opaque",
                                     {{"driver", "neuron.aws.com"},
                                      {"parameters",
                                       {{"apiVersion", "neuron.aws.com/v1"},
                                        {"kind", "NeuronConfig"},
                                        {"compileCache", {{"name", "llama"}}}}}}}}});
  const std::string uid = env.CreateClaim("cached", "neurondevice1", config, "trainer");
  REQUIRE_FALSE(uid.empty());

  auto prepared =
      env.kubelet().NodePrepareResources("neuron.aws.com", {{"default", "cached", uid}});
  REQUIRE(prepared.ok());
  REQUIRE(prepared->at(uid).error.empty());
  const json spec = ReadJson(env.cdi_root() + "/" + CdiSpecFileName(uid));
  const json& edits = spec["devices"][0]["containerEdits"];
  CHECK(edits["deviceNodes"][0]["path"] == "/dev/neuron1");
  CHECK(edits["mounts"] == json::array({{{"hostPath", mounts.ViewDir(uid)},
                                         {"containerPath", "/var/tmp/neuron-compile-cache"},
                                         {"options", {"rbind", "rw"}}}}));
  REQUIRE(mounts.prepares().size() == 1);
  CHECK(mounts.prepares()[0].cache_namespace == "default");
  CHECK(mounts.prepares()[0].pods == std::vector<PodRef>{{"default", "trainer", "trainer-uid"}});

  auto unprepared =
      env.kubelet().NodeUnprepareResources("neuron.aws.com", {{"default", "cached", uid}});
  REQUIRE(unprepared.ok());
  CHECK(unprepared->at(uid).empty());
  CHECK(mounts.releases() == std::vector<std::string>{uid});
  CHECK_FALSE(mounts.HasView(uid));
}

json UltraServerClaimConfig(int nodes) {
  return json::array({{{"source", "FromClaim"},
                       {"requests", {"neuron"}},
                       {"opaque",
                        {{"driver", "neuron.aws.com"},
                         {"parameters",
                          {{"apiVersion", "neuron.aws.com/v1"},
                           {"kind", "UltraServerConfig"},
                           {"ultraserverMode", nodes}}}}}}});
}

std::vector<std::string> CdiEnv(const DraAppEnv& env, const std::string& uid) {
  const json spec = ReadJson(env.cdi_root() + "/" + CdiSpecFileName(uid));
  return spec["devices"][0]["containerEdits"].value("env", std::vector<std::string>{});
}

bool Has(const std::vector<std::string>& env, const std::string& var) {
  return std::find(env.begin(), env.end(), var) != env.end();
}

std::string Trimmed(std::string s) {
  while (!s.empty() && s.back() == '\n') {
    s.pop_back();
  }
  return s;
}

// Node 2 of emulated UltraServer "us-a" (trn2u.48xlarge), its Node labelled with EC2 network
// layers; node 0 of its set of 4 is another Node in the API, labelled as AWS labels it.
TEST_CASE("an UltraServer node publishes neuronnode and prepares AWS's UltraServer claims",
          "[dra][app][e2e][ultraserver]") {
  DraAppEnv env({.shape = "trn2u.48xlarge",
                 .resync = absl::Milliseconds(200),
                 .node_labels = {{"topology.k8s.aws/network-node-layer-1", "nn-1111"},
                                 {"topology.k8s.aws/network-node-layer-2", "nn-2222"},
                                 {"topology.k8s.aws/network-node-layer-3", "nn-3333"}}});
  REQUIRE(env.Start());
  REQUIRE(Eventually([&] { return env.Slice().is_object(); }, kStartup));
  auto node = ultraserver::ParseEmulatedNode("us-a:2");
  REQUIRE(node.ok());
  const auto files = ultraserver::EmulatedClassAttributes(*node);
  REQUIRE(env.WriteClassAttributes(files));
  REQUIRE(Eventually([&] { return env.Device("neuronnode").is_object(); }, absl::Seconds(10)));
  const json a = env.Device("neuronnode")["attributes"];
  const std::string server4 = Trimmed(files.at("server_id_4"));
  CHECK(a["resourceType"]["string"] == "neuron_node");
  CHECK(a["instanceType"]["string"] == "trn2u.48xlarge");
  CHECK(a["ultraserverModes"]["string"] == "1_2_4");
  CHECK(a["ultraserverServerId4"]["string"] == server4);
  CHECK(a["ultraserverNodeId4"]["int"] == 2);
  CHECK(a["ultraserverNodeId2"]["int"] == 0);
  CHECK(a["networkNodeLayer3"]["string"] == "nn-3333");
  CHECK(env.Device("neurondevice0")["attributes"]["networkNodeLayer1"]["string"] == "nn-1111");

  REQUIRE(env.apiserver()
              .Put("/api/v1/nodes/us-a-node-0",
                   {{"apiVersion", "v1"},
                    {"kind", "Node"},
                    {"metadata",
                     {{"name", "us-a-node-0"},
                      {"labels",
                       {{"neuron.amazonaws.com/ultraserver-server-id-4", server4},
                        {"neuron.amazonaws.com/ultraserver-node-id-4", "0"}}}}}})
              .ok());
  REQUIRE(env.kubelet().WaitForRegistrations(1, kStartup));
  const std::string u4 = env.CreateClaim("us-4", "neuronnode", UltraServerClaimConfig(4));
  auto p4 = env.kubelet().NodePrepareResources("neuron.aws.com", {{"default", "us-4", u4}});
  REQUIRE(p4.ok());
  REQUIRE(p4->at(u4).error.empty());
  const std::vector<std::string> e4 = CdiEnv(env, u4);
  CHECK(Has(e4, "NEURON_RT_ULTRASERVER_MODE=1"));
  CHECK(Has(e4, "NEURON_RT_ULTRASERVER_SERVER_ID=" + server4));
  CHECK(Has(e4, "NEURON_RT_ULTRASERVER_NODE_ID=2"));
  CHECK(Has(e4, "NEURON_GLOBAL_TOPOID=2"));
  CHECK(Has(e4, "NEURON_GLOBAL_TOPOID0_HOST=us-a-node-0"));
  CHECK(Has(e4, "NEURON_RT_VISIBLE_CORES=0-63"));
  // The node is taken: a device claim waits with the reason.
  const std::string dev = env.CreateClaim("dev", "neurondevice1");
  auto pd = env.kubelet().NodePrepareResources("neuron.aws.com", {{"default", "dev", dev}});
  REQUIRE(pd.ok());
  CHECK_THAT(pd->at(dev).error, Catch::Contains("neuronnode"));
  REQUIRE(env.kubelet().NodeUnprepareResources("neuron.aws.com", {{"default", "us-4", u4}}).ok());

  // A set of 2: node 2 is node 0 of its pair, so rank 0 is this node.
  const std::string u2 = env.CreateClaim("us-2", "neuronnode", UltraServerClaimConfig(2));
  auto p2 = env.kubelet().NodePrepareResources("neuron.aws.com", {{"default", "us-2", u2}});
  REQUIRE(p2.ok());
  REQUIRE(p2->at(u2).error.empty());
  const std::vector<std::string> e2 = CdiEnv(env, u2);
  CHECK(Has(e2, "NEURON_RT_ULTRASERVER_MODE=2"));
  CHECK(Has(e2, "NEURON_RT_ULTRASERVER_NODE_ID=0"));
  CHECK(Has(e2, "NEURON_GLOBAL_TOPOID0_HOST=" + std::string(testing::kNode)));
}

}  // namespace
}  // namespace neuron::dra
