// File: tests/csi/csi_driver_test.cc
// The CSI node driver over real gRPC on real unix sockets with real mounts (overlay when this
// machine allows it, else the copy mounter, as the driver itself decides): what a pod sees in its
// volume, what stays private, what the kubelet gets back, and what a restarted driver undoes.
#include <catch2/catch.hpp>
#include <iostream>

#include "lib/csi/csi_node_driver.h"
#include "lib/csi/mounter.h"
#include "proto/pluginregistration/v1/api.grpc.pb.h"
#include "tests/csi/csi_test_env.h"

namespace neuron::csi {
namespace {

using testing::Ctx;
using testing::Dial;
using testing::DirBackend;
using testing::Eventually;
using testing::KubeletPublish;
using testing::ReadFile;
using testing::RunningDriver;
using testing::TempTree;
using testing::WriteFile;
namespace fs = std::filesystem;
namespace pb = ::csi::v1;

// A node: kubelet root, a cache's node copy with two graphs, the driver's state and plugin dirs.
struct Node {
  TempTree tmp;
  const std::string kubelet = tmp.path() + "/kubelet";
  const std::string node_copy = tmp.path() + "/caches/team-llama";
  const std::string state = tmp.path() + "/state";
  DirBackend backend{node_copy};
  std::unique_ptr<Mounter> mounter;

  Node() {
    WriteFile(node_copy + "/model.neff", "graph-a");
    WriteFile(node_copy + "/sub/b.neff", "graph-b");
    fs::create_directories(state);
    mounter = DetectMounter(state);
    if (std::string(mounter->name()) != "overlay") {
      std::cout << "overlay probe failed here: testing with the copy mounter\n";
    }
  }

  CsiDriverOptions Options() const {
    CsiDriverOptions o;
    o.node_id = "node-a";
    o.plugins_dir = tmp.path() + "/kubelet/plugins";
    o.registrar_dir = tmp.path() + "/kubelet/plugins_registry";
    o.kubelet_dir = kubelet;
    o.state_dir = state;
    o.check_interval = absl::Milliseconds(200);
    return o;
  }

  // The kubelet's layout; it creates the parent, the driver creates `mount`.
  std::string Target(const std::string& pod, const std::string& volume) const {
    fs::path parent =
        fs::path(kubelet) / "pods" / ("uid-" + pod) / "volumes" / "kubernetes.io~csi" / volume;
    fs::create_directories(parent);
    return (parent / "mount").string();
  }
};

struct Client {
  explicit Client(const std::string& sock)
      : node(Dial<pb::Node>(sock)), identity(Dial<pb::Identity>(sock)) {}
  grpc::Status Publish(const pb::NodePublishVolumeRequest& req) {
    pb::NodePublishVolumeResponse resp;
    return node->NodePublishVolume(Ctx().get(), req, &resp);
  }
  grpc::Status Unpublish(const std::string& id, const std::string& target) {
    pb::NodeUnpublishVolumeRequest req;
    req.set_volume_id(id);
    req.set_target_path(target);
    pb::NodeUnpublishVolumeResponse resp;
    return node->NodeUnpublishVolume(Ctx().get(), req, &resp);
  }
  std::unique_ptr<pb::Node::Stub> node;
  std::unique_ptr<pb::Identity::Stub> identity;
};

bool Served(const CsiDriverOptions& o) {
  return Eventually(
      [&] { return fs::exists(CsiSocketPath(o)) && fs::exists(CsiRegistrationSocketPath(o)); });
}

TEST_CASE("a published volume shows the node copy; the pod's writes stay private", "[csi]") {
  Node n;
  // The mounter the driver picks on this machine, and the copy fallback explicitly.
  if (GENERATE(false, true)) n.mounter = NewCopyMounter();
  INFO("mounter " << n.mounter->name());
  const CsiDriverOptions o = n.Options();
  RunningDriver running(o, n.backend, *n.mounter);
  REQUIRE(Served(o));
  Client c(CsiSocketPath(o));

  const std::string a = n.Target("pod-a", "cache");
  const std::string b = n.Target("pod-b", "cache");
  const std::string id_a = "csi-aaaa", id_b = "csi-bbbb";
  grpc::Status s = c.Publish(KubeletPublish(id_a, a, "pod-a"));
  REQUIRE(s.error_message() == "");
  REQUIRE(s.ok());
  REQUIRE(c.Publish(KubeletPublish(id_b, b, "pod-b")).ok());
  CHECK(n.mounter->IsMounted(a));
  CHECK(n.backend.context(id_a).at("csi.storage.k8s.io/pod.name") == "pod-a");
  CHECK(running.driver().active_volumes() == 2);

  // Visible, then written: a new graph and a rewritten one.
  CHECK(ReadFile(a + "/model.neff") == "graph-a");
  CHECK(ReadFile(a + "/sub/b.neff") == "graph-b");
  WriteFile(a + "/sub/new.neff", "graph-new");
  WriteFile(a + "/model.neff", "graph-a-recompiled");
  CHECK(ReadFile(a + "/sub/new.neff") == "graph-new");
  CHECK(ReadFile(a + "/model.neff") == "graph-a-recompiled");
  // The node copy did not change, and the other pod's view is the node copy's.
  CHECK_FALSE(fs::exists(n.node_copy + "/sub/new.neff"));
  CHECK(ReadFile(n.node_copy + "/model.neff") == "graph-a");
  CHECK_FALSE(fs::exists(b + "/sub/new.neff"));
  CHECK(ReadFile(b + "/model.neff") == "graph-a");

  SECTION("publish again at the same target is OK and acquires nothing more") {
    CHECK(c.Publish(KubeletPublish(id_a, a, "pod-a")).ok());
    CHECK(n.backend.acquires() == 2);
    CHECK(ReadFile(a + "/sub/new.neff") == "graph-new");
  }
  SECTION("unpublish removes the view, the target, the pod's writes and the record") {
    REQUIRE(c.Unpublish(id_a, a).ok());
    CHECK_FALSE(n.mounter->IsMounted(a));
    CHECK_FALSE(fs::exists(a));
    CHECK_FALSE(fs::exists(n.state + "/volumes/" + id_a));
    CHECK_FALSE(fs::exists(n.state + "/volumes/" + id_a + ".json"));
    CHECK(n.backend.held() == std::set<std::string>{id_b});
    CHECK(running.driver().active_volumes() == 1);
    CHECK(ReadFile(b + "/model.neff") == "graph-a");  // the other volume is untouched
    CHECK(c.Unpublish(id_a, a).ok());                 // again: OK
    CHECK(c.Unpublish("csi-unknown", n.Target("pod-c", "cache")).ok());
    CHECK(c.Unpublish(id_b, b).ok());
    CHECK(running.driver().active_volumes() == 0);
    CHECK(ReadFile(n.node_copy + "/model.neff") == "graph-a");
  }
  CHECK(running.Stop().ok());
  CHECK_FALSE(fs::exists(CsiSocketPath(o)));
  CHECK_FALSE(fs::exists(CsiRegistrationSocketPath(o)));
}

TEST_CASE("a backend that is not ready fails the publish with its own code and words", "[csi]") {
  Node n;
  const CsiDriverOptions o = n.Options();
  RunningDriver running(o, n.backend, *n.mounter);
  REQUIRE(Served(o));
  Client c(CsiSocketPath(o));
  const std::string msg = "cache team/llama not extracted on this node yet: Pulling";
  n.backend.SetNotReady(absl::UnavailableError(msg));
  const std::string t = n.Target("pod-a", "cache");

  grpc::Status s = c.Publish(KubeletPublish("csi-aaaa", t, "pod-a"));
  CHECK(s.error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(s.error_message() == msg);
  CHECK_FALSE(fs::exists(t));
  CHECK(running.driver().active_volumes() == 0);

  n.backend.SetNotReady(absl::OkStatus());  // the kubelet retries once the cache is there
  CHECK(c.Publish(KubeletPublish("csi-aaaa", t, "pod-a")).ok());
  CHECK(ReadFile(t + "/model.neff") == "graph-a");
}

TEST_CASE("requests the driver does not serve are refused as invalid", "[csi]") {
  Node n;
  const CsiDriverOptions o = n.Options();
  RunningDriver running(o, n.backend, *n.mounter);
  REQUIRE(Served(o));
  Client c(CsiSocketPath(o));
  const std::string t = n.Target("pod-a", "cache");
  auto invalid = [&](const pb::NodePublishVolumeRequest& req) {
    grpc::Status s = c.Publish(req);
    INFO(s.error_message());
    CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    return s.error_message();
  };

  pb::NodePublishVolumeRequest block = KubeletPublish("csi-aaaa", t, "pod-a");
  block.mutable_volume_capability()->mutable_block();
  CHECK_THAT(invalid(block), Catch::Contains("block"));

  pb::NodePublishVolumeRequest persistent = KubeletPublish("csi-aaaa", t, "pod-a");
  (*persistent.mutable_volume_context())["csi.storage.k8s.io/ephemeral"] = "false";
  CHECK_THAT(invalid(persistent), Catch::Contains("only inline ephemeral volumes"));
  persistent.mutable_volume_context()->clear();
  CHECK_THAT(invalid(persistent), Catch::Contains("only inline ephemeral volumes"));

  fs::create_directories(n.tmp.path() + "/elsewhere");
  invalid(KubeletPublish("csi-aaaa", n.tmp.path() + "/elsewhere/mount", "pod-a"));
  invalid(KubeletPublish("csi-aaaa", n.kubelet + "/pods/../plugins/mount", "pod-a"));
  invalid(KubeletPublish("csi-aaaa", n.kubelet + "/pods", "pod-a"));
  invalid(KubeletPublish("csi-aaaa", "pods/uid/mount", "pod-a"));
  for (const std::string& id :
       std::vector<std::string>{"", "../etc", "a/b", ".hidden", std::string(129, 'a')}) {
    CHECK_THAT(invalid(KubeletPublish(id, t, "pod-a")), Catch::Contains("volume_id"));
  }
  CHECK(n.backend.acquires() == 0);
  CHECK_FALSE(fs::exists(t));
  CHECK_FALSE(fs::exists(n.tmp.path() + "/elsewhere/mount"));
}

// Mounts nothing and says so: the driver must undo everything it did for the volume.
class FailingMounter final : public Mounter {
 public:
  absl::Status Mount(const std::string&, const std::string&, const std::string&,
                     const std::string&) override {
    return absl::InternalError("mount refused by test");
  }
  absl::Status Unmount(const std::string&) override { return absl::OkStatus(); }
  bool IsMounted(const std::string&) override { return false; }
};

TEST_CASE("a failure after Acquire releases the volume and leaves nothing behind", "[csi]") {
  Node n;
  FailingMounter failing;
  const CsiDriverOptions o = n.Options();
  RunningDriver running(o, n.backend, failing);
  REQUIRE(Served(o));
  Client c(CsiSocketPath(o));
  const std::string t = n.Target("pod-a", "cache");

  grpc::Status s = c.Publish(KubeletPublish("csi-aaaa", t, "pod-a"));
  CHECK(s.error_code() == grpc::StatusCode::INTERNAL);
  CHECK(s.error_message() == "mount refused by test");
  CHECK(n.backend.released() == std::vector<std::string>{"csi-aaaa"});
  CHECK(n.backend.held().empty());
  CHECK_FALSE(fs::exists(t));
  CHECK_FALSE(fs::exists(n.state + "/volumes/csi-aaaa"));
  CHECK_FALSE(fs::exists(n.state + "/volumes/csi-aaaa.json"));
}

TEST_CASE("a restarted driver unpublishes a volume the previous one published", "[csi]") {
  Node n;
  const CsiDriverOptions o = n.Options();
  const std::string t = n.Target("pod-a", "cache");
  {
    RunningDriver first(o, n.backend, *n.mounter);
    REQUIRE(Served(o));
    REQUIRE(Client(CsiSocketPath(o)).Publish(KubeletPublish("csi-aaaa", t, "pod-a")).ok());
    WriteFile(t + "/new.neff", "graph-new");
    REQUIRE(first.Stop().ok());
  }
  // The pod keeps its view while no driver runs.
  CHECK(ReadFile(t + "/new.neff") == "graph-new");

  DirBackend second_backend(n.node_copy);
  std::unique_ptr<Mounter> second_mounter = DetectMounter(n.state);
  RunningDriver second(o, second_backend, *second_mounter);
  REQUIRE(Served(o));
  CHECK(second.driver().active_volumes() == 1);
  REQUIRE(second.driver().published_volumes().size() == 1);
  CHECK(second.driver().published_volumes()[0].lower_dir == n.node_copy);

  REQUIRE(Client(CsiSocketPath(o)).Unpublish("csi-aaaa", t).ok());
  CHECK_FALSE(second_mounter->IsMounted(t));
  CHECK_FALSE(fs::exists(t));
  CHECK_FALSE(fs::exists(n.state + "/volumes/csi-aaaa"));
  CHECK(second_backend.released() == std::vector<std::string>{"csi-aaaa"});
  CHECK(second.driver().active_volumes() == 0);
  CHECK_FALSE(fs::exists(n.node_copy + "/new.neff"));
}

TEST_CASE("the kubelet's plugin watcher registers the driver as a CSI plugin", "[csi]") {
  Node n;
  CsiDriverOptions o = n.Options();
  o.host_plugins_dir = "/var/lib/kubelet/plugins";
  RunningDriver running(o, n.backend, *n.mounter);
  REQUIRE(Served(o));

  auto reg = Dial<pluginregistration::Registration>(CsiRegistrationSocketPath(o));
  pluginregistration::PluginInfo info;
  REQUIRE(reg->GetInfo(Ctx().get(), pluginregistration::InfoRequest(), &info).ok());
  CHECK(info.type() == "CSIPlugin");
  CHECK(info.name() == "cache.neuron.aws.com");
  CHECK(info.endpoint() == "/var/lib/kubelet/plugins/cache.neuron.aws.com/csi.sock");
  // The kubelet's validateVersions: the highest parseable version must be 1.x.
  REQUIRE(info.supported_versions_size() >= 1);
  for (const std::string& v : info.supported_versions()) CHECK(v.rfind("1.", 0) == 0);
  CHECK(absl::IsUnavailable(running.driver().registration_status()));

  // RegisterPlugin: NodeGetInfo on the endpoint (here at our own path), then the verdict.
  Client c(CsiSocketPath(o));
  pb::NodeGetInfoResponse node_info;
  REQUIRE(c.node->NodeGetInfo(Ctx().get(), pb::NodeGetInfoRequest(), &node_info).ok());
  CHECK(node_info.node_id() == "node-a");
  pluginregistration::RegistrationStatus ok;
  ok.set_plugin_registered(true);
  pluginregistration::RegistrationStatusResponse ack;
  REQUIRE(reg->NotifyRegistrationStatus(Ctx().get(), ok, &ack).ok());
  CHECK(running.driver().registration_status().ok());

  // What the kubelet asks before publishing: no STAGE_UNSTAGE, no VOLUME_MOUNT_GROUP.
  pb::NodeGetCapabilitiesResponse caps;
  REQUIRE(c.node->NodeGetCapabilities(Ctx().get(), {}, &caps).ok());
  CHECK(caps.capabilities_size() == 0);
  pb::GetPluginInfoResponse plugin;
  REQUIRE(c.identity->GetPluginInfo(Ctx().get(), {}, &plugin).ok());
  CHECK(plugin.name() == "cache.neuron.aws.com");
  CHECK_FALSE(plugin.vendor_version().empty());
  pb::GetPluginCapabilitiesResponse plugin_caps;
  REQUIRE(c.identity->GetPluginCapabilities(Ctx().get(), {}, &plugin_caps).ok());
  CHECK(plugin_caps.capabilities_size() == 0);
  pb::ProbeResponse probe;
  REQUIRE(c.identity->Probe(Ctx().get(), {}, &probe).ok());
  CHECK(probe.ready().value());
}

}  // namespace
}  // namespace neuron::csi
