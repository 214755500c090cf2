// File: tests/deviceplugin/ultraserver_allocate_test.cc
// Allocate for a pod the scheduler extender placed in an UltraServer group: over real gRPC on a
// unix socket (the fake kubelet), on an emulated trn2u.48xlarge tree whose driver class
// attributes say "node 2 of UltraServer us-a" (lib/ultraserver/emulation.h). The container gets
// the runtime's five variables, identity from the driver and rank from the annotations; a
// placement the driver contradicts fails Allocate naming both; other pods get none of them.
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/synchronization/notification.h"
#include "catch2/catch.hpp"
#include "lib/deviceplugin/handshake.h"
#include "lib/deviceplugin/inventory_source.h"
#include "lib/deviceplugin/plugin_manager.h"
#include "lib/inventory/emulation.h"
#include "lib/sysfs/emulator.h"
#include "lib/sysfs/fs.h"
#include "lib/topology/topology.h"
#include "lib/ultraserver/emulation.h"
#include "lib/ultraserver/read_identity.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/kubelet/fake_kubelet.h"

namespace neuron::deviceplugin {
namespace {

constexpr absl::Duration kAllocateWait = absl::Seconds(10);

class FixedPods final : public PodDirectory {
 public:
  std::vector<PodAnnotations> pods;
  absl::StatusOr<std::vector<PodAnnotations>> ListNodePods() override { return pods; }
  absl::Status PatchAnnotations(const std::string&, const std::string&,
                                const std::map<std::string, std::string>&) override {
    return absl::OkStatus();
  }
};

// Node 2 of emulated UltraServer us-a: server id 4 and the pair's server id as its driver says.
struct UsNode {
  UsNode() {
    char tmpl[] = "/tmp/us-allocate-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    root = tmpl;
    auto spec = inventory::BuildEmulationSpec(*topology::FindShape("trn2u.48xlarge"));
    REQUIRE(spec.ok());
    attrs = ultraserver::EmulatedClassAttributes(*ultraserver::ParseEmulatedNode("us-a:2"));
    spec->class_attributes = attrs;
    REQUIRE(sysfs::WriteEmulatedTree(root, *spec).ok());
    fs = sysfs::MakeRootedFs(root);
    inventory::WatcherOptions o;
    o.scan.instance_type = "trn2u.48xlarge";
    watcher = std::make_unique<inventory::Watcher>(*fs, clock, o);
    REQUIRE(watcher->Poll());
  }
  ~UsNode() {
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  }
  std::string ServerId(int size) const {
    std::string s = attrs.at(ultraserver::ServerIdFile(size));
    return s.substr(0, s.size() - 1);  // "%016llx\n"
  }
  std::string root;
  std::map<std::string, std::string> attrs;
  std::unique_ptr<sysfs::Fs> fs;
  fakes::FakeClock clock;
  std::unique_ptr<inventory::Watcher> watcher;
};

// What the extender's bind writes on a group pod given all 16 devices.
PodAnnotations Placed(const std::string& name, int size, const std::string& server_id, int node_id,
                      int mode) {
  return {"ml",
          name,
          {{assignment::kAnnotationIds, "0-15"},
           {assignment::kAnnotationType, "neuron"},
           {assignment::kAnnotationAllocated, "false"},
           {assignment::kAnnotationAllocTime, "100"},
           {kUsSetSizeAnnotation, std::to_string(size)},
           {kUsServerIdAnnotation, server_id},
           {kUsNodeIdAnnotation, std::to_string(node_id)},
           {kUsModeAnnotation, std::to_string(mode)},
           {kUsRankAnnotation, std::to_string(node_id)},
           {kUsRank0HostAnnotation, "us-a-node-0"}}};
}

v1beta1::AllocateRequest AllDevices() {
  v1beta1::AllocateRequest req;
  auto* c = req.add_container_requests();
  for (int i = 0; i < 16; ++i) c->add_devices_ids(std::to_string(i));
  return req;
}

struct Served {
  explicit Served(UsNode& n)
      : source(*n.watcher),
        handshake(pods, [] { return std::vector<PodHoldings>{}; }),
        alloc(assignment::ResourceKind::kDevice, {"/dev/null", CoreNumbering::kContainer}),
        server(alloc, source, &handshake, kubelet_dir() + "/aws-neuron.sock") {
    const sysfs::Fs* fs = n.fs.get();
    server.set_ultraserver_identity([fs] { return ultraserver::ReadIdentity(*fs); });
    ManagerOptions mo;
    mo.plugin_dir = kubelet.dir();
    manager = std::make_unique<PluginManager>(std::vector<PluginServer*>{&server}, mo);
    thread = std::thread([this] { run_status = manager->Run(stop); });
    REQUIRE(kubelet.WaitForDevices(
        "aws.amazon.com/neuron", [](const auto& r) { return r.devices_size() == 16; },
        kAllocateWait));
  }
  ~Served() {
    stop.Notify();
    thread.join();
  }
  std::string kubelet_dir() {
    if (!started) {
      REQUIRE(kubelet.Start().ok());
      started = true;
    }
    return kubelet.dir();
  }
  fakes::FakeKubelet kubelet;
  bool started = false;
  FixedPods pods;
  InventorySource source;
  Handshake handshake;
  Allocator alloc;
  PluginServer server;
  std::unique_ptr<PluginManager> manager;
  absl::Notification stop;
  absl::Status run_status;
  std::thread thread;
};

TEST_CASE("Allocate gives a group pod the UltraServer runtime environment", "[integration]") {
  UsNode node;
  Served s(node);
  s.pods.pods = {Placed("four-2", 4, node.ServerId(4), 2, 1)};
  auto r = s.kubelet.Allocate("aws.amazon.com/neuron", AllDevices());
  REQUIRE(r.ok());
  const auto& envs = r->container_responses(0).envs();
  CHECK(envs.at("NEURON_RT_ULTRASERVER_MODE") == "1");
  CHECK(envs.at("NEURON_RT_ULTRASERVER_SERVER_ID") == node.ServerId(4));
  CHECK(envs.at("NEURON_RT_ULTRASERVER_NODE_ID") == "2");
  CHECK(envs.at("NEURON_GLOBAL_TOPOID") == "2");
  CHECK(envs.at("NEURON_GLOBAL_TOPOID0_HOST") == "us-a-node-0");
  CHECK(envs.count("NEURON_RT_VISIBLE_CORES") == 1);

  // A pair: node 2 of us-a is node 0 of its pair, in mode X2H.
  s.pods.pods = {Placed("pair-0", 2, node.ServerId(2), 0, 2)};
  r = s.kubelet.Allocate("aws.amazon.com/neuron", AllDevices());
  REQUIRE(r.ok());
  CHECK(r->container_responses(0).envs().at("NEURON_RT_ULTRASERVER_MODE") == "2");
  CHECK(r->container_responses(0).envs().at("NEURON_RT_ULTRASERVER_SERVER_ID") == node.ServerId(2));
  CHECK(r->container_responses(0).envs().at("NEURON_GLOBAL_TOPOID") == "0");

  // A pod of no group, and a group pod whose choice is other IDs: no UltraServer variables.
  PodAnnotations plain = Placed("plain", 4, node.ServerId(4), 2, 1);
  for (const char* k : {kUsSetSizeAnnotation, kUsServerIdAnnotation, kUsNodeIdAnnotation,
                        kUsModeAnnotation, kUsRankAnnotation, kUsRank0HostAnnotation}) {
    plain.annotations.erase(k);
  }
  s.pods.pods = {plain};
  r = s.kubelet.Allocate("aws.amazon.com/neuron", AllDevices());
  REQUIRE(r.ok());
  CHECK(r->container_responses(0).envs().count("NEURON_RT_ULTRASERVER_MODE") == 0);
  PodAnnotations other = Placed("other", 4, node.ServerId(4), 2, 1);
  other.annotations[assignment::kAnnotationIds] = "0-7";
  s.pods.pods = {other};
  r = s.kubelet.Allocate("aws.amazon.com/neuron", AllDevices());
  REQUIRE(r.ok());
  CHECK(r->container_responses(0).envs().count("NEURON_GLOBAL_TOPOID") == 0);
}

TEST_CASE("Allocate refuses a group placement the node's driver contradicts", "[integration]") {
  UsNode node;
  Served s(node);
  // The extender believed this node was node 1 (stale labels).
  s.pods.pods = {Placed("four-1", 4, node.ServerId(4), 1, 1)};
  auto r = s.kubelet.Allocate("aws.amazon.com/neuron", AllDevices());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kFailedPrecondition);
  const std::string msg(r.status().message());
  CHECK(msg.find("placed the pod as node 1 of set " + node.ServerId(4)) != std::string::npos);
  CHECK(msg.find("driver says it is node 2 of set " + node.ServerId(4)) != std::string::npos);
  // Another UltraServer altogether.
  s.pods.pods = {Placed("four-x", 4, "00000000deadbeef", 2, 1)};
  r = s.kubelet.Allocate("aws.amazon.com/neuron", AllDevices());
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("deadbeef") != std::string::npos);
  // Malformed placement: a clear error, never a guess.
  PodAnnotations bad = Placed("bad", 4, node.ServerId(4), 2, 1);
  bad.annotations[kUsRankAnnotation] = "seven";
  s.pods.pods = {bad};
  r = s.kubelet.Allocate("aws.amazon.com/neuron", AllDevices());
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("neuron.aws.com/ultraserver-rank") !=
        std::string::npos);
  // The driver's election is running ("busy"): try again later.
  std::ofstream(node.root + "/sys/class/neuron_device/server_id_4") << "busy\n";
  s.pods.pods = {Placed("four-2", 4, node.ServerId(4), 2, 1)};
  r = s.kubelet.Allocate("aws.amazon.com/neuron", AllDevices());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace neuron::deviceplugin
