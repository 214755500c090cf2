// SlicePublisher against the fake apiserver over real HTTP: first publish, idempotence (also
// across a restart), health changes with and without device taints, fewer slices after a shape
// change, stale slices, Node ownership, v1beta1-only servers, retries and errors.
#include "lib/dra/slice_publisher.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "lib/base/clock.h"
#include "lib/dra/names.h"
#include "lib/dra/resource_slice.h"
#include "lib/k8s/transport.h"
#include "lib/topology/shapes.h"
#include "nlohmann/json.hpp"
#include "tests/fakes/apiserver/fake_apiserver.h"

namespace neuron::dra {
namespace {

using nlohmann::json;

constexpr char kNode[] = "ip-10-0-0-1.ec2.internal";
constexpr char kV1Slices[] = "/apis/resource.k8s.io/v1/resourceslices/";
constexpr char kV1beta1Slices[] = "/apis/resource.k8s.io/v1beta1/resourceslices/";

// Sleeps take no time; the test sees how long the publisher would have waited.
class InstantClock final : public Clock {
 public:
  absl::Time Now() override { return now_; }
  void SleepFor(absl::Duration d) override {
    now_ += d;
    sleeps.push_back(d);
  }
  std::vector<absl::Duration> sleeps;

 private:
  absl::Time now_ = absl::UnixEpoch();
};

std::string SliceName(int index) {
  return std::string(kNode) + "-neuron.aws.com-" + std::to_string(index);
}

struct Env {
  Env() {
    REQUIRE(fake.Start().ok());
    k8s::ClientConfig cfg;
    cfg.server = fake.url();
    // No RetryingTransport: the publisher's own retries are under test.
    auto transport = k8s::NewHttpTransport(cfg);
    REQUIRE(transport.ok());
    client = std::make_unique<k8s::RestClient>(*transport);
    REQUIRE(fake.Put(std::string("/api/v1/nodes/") + kNode,
                     {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", kNode}}}})
                .ok());
  }
  SlicePublisher Publisher() { return SlicePublisher(*client, kNode, {.clock = &clock}); }
  json Slice(int index, const char* prefix = kV1Slices) const {
    return fake.Get(prefix + SliceName(index));
  }
  size_t Writes() const {
    return fake.RequestCount("PATCH", "") + fake.RequestCount("POST", "") +
           fake.RequestCount("PUT", "") + fake.RequestCount("DELETE", "");
  }

  fakes::FakeApiServer fake;
  std::unique_ptr<k8s::RestClient> client;
  InstantClock clock;
};

NodeDeviceInfo Node(const char* instance_type, int lnc = 0) {
  NodeDeviceInfo n;
  n.node_name = kNode;
  n.shape = topology::FindShape(instance_type);
  n.lnc = lnc;
  n.neuron_driver_version = "2.24.7.0";
  n.dra_driver_version = "0.1.0";
  return n;
}

std::vector<ResourceSliceModel> Build(const NodeDeviceInfo& n, SliceOptions o = {}) {
  absl::StatusOr<std::vector<ResourceSliceModel>> s = BuildResourceSlices(n, o);
  REQUIRE(s.ok());
  return *s;
}

const json* FindDevice(const json& slice, const std::string& name) {
  for (const json& d : slice["spec"]["devices"]) {
    if (d["name"] == name) return &d;
  }
  return nullptr;
}

TEST_CASE("the first publish creates the node's slice, applied and owned by the Node",
          "[dra][publisher]") {
  Env env;
  SlicePublisher p = env.Publisher();
  REQUIRE(p.Publish(Build(Node("trn2.48xlarge"))).ok());
  CHECK(p.api() == ResourceApi::kV1);
  CHECK(p.pool_generation() == 1);

  const json slice = env.Slice(0);
  REQUIRE(slice.is_object());
  CHECK(slice["apiVersion"] == "resource.k8s.io/v1");
  const json& spec = slice["spec"];
  CHECK(spec["driver"] == "neuron.aws.com");
  CHECK(spec["nodeName"] == kNode);
  CHECK(spec["pool"] == json{{"name", kNode}, {"generation", 1}, {"resourceSliceCount", 1}});
  REQUIRE(spec["devices"].size() == 16);
  CHECK(spec["devices"][0].contains("attributes"));  // v1: fields on the device
  CHECK_FALSE(spec["devices"][0].contains("basic"));

  const json node = env.fake.Get(std::string("/api/v1/nodes/") + kNode);
  const json& owner = slice["metadata"]["ownerReferences"][0];
  CHECK(owner["apiVersion"] == "v1");
  CHECK(owner["kind"] == "Node");
  CHECK(owner["name"] == kNode);
  CHECK(owner["uid"] == node["metadata"]["uid"]);
  CHECK(owner["controller"] == true);
  const json& managed = slice["metadata"]["managedFields"][0];
  CHECK(managed["manager"] == "neuron-dra-driver");
  CHECK(managed["operation"] == "Apply");

  SECTION("the slice goes when the Node goes") {
    REQUIRE(env.client->Delete(k8s::resources::kNodes, "", kNode).ok());
    CHECK(env.Slice(0).is_null());

    // A node that comes back is a new owner: after Invalidate() the slice returns, owned by it.
    REQUIRE(env.fake
                .Put(std::string("/api/v1/nodes/") + kNode,
                     {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", kNode}}}})
                .ok());
    p.Invalidate();
    REQUIRE(p.Publish(Build(Node("trn2.48xlarge"))).ok());
    const json back = env.Slice(0);
    REQUIRE(back.is_object());
    CHECK(back["metadata"]["ownerReferences"][0]["uid"] ==
          env.fake.Get(std::string("/api/v1/nodes/") + kNode)["metadata"]["uid"]);
    CHECK(back["metadata"]["ownerReferences"][0]["uid"] != owner["uid"]);
    CHECK(back["spec"]["pool"]["generation"] == 2);  // never lowered, even for a new pool
  }
}

TEST_CASE("an unchanged publish makes no request, also after a restart", "[dra][publisher]") {
  Env env;
  const auto slices = Build(Node("trn2.48xlarge", 1), {.partitionable = true});
  REQUIRE(slices.size() == 2);
  SlicePublisher p = env.Publisher();
  REQUIRE(p.Publish(slices).ok());
  CHECK(env.fake.RequestCount("PATCH", "/resourceslices/") == 2);
  CHECK(env.fake.RequestCount("GET", "/api/v1/nodes/") == 1);

  const size_t before = env.fake.RequestCount("", "");
  REQUIRE(p.Publish(slices).ok());
  REQUIRE(p.Publish(slices).ok());
  CHECK(env.fake.RequestCount("", "") == before);

  // A restarted driver reads the server once, finds everything in place, writes nothing.
  const size_t writes = env.Writes();
  const int64_t rv = env.fake.ResourceVersion();
  SlicePublisher restarted = env.Publisher();
  REQUIRE(restarted.Publish(slices).ok());
  CHECK(env.Writes() == writes);
  CHECK(env.fake.ResourceVersion() == rv);
  CHECK(restarted.pool_generation() == 1);

  // So does Invalidate(): one list, no write.
  p.Invalidate();
  REQUIRE(p.Publish(slices).ok());
  CHECK(env.Writes() == writes);
}

TEST_CASE("an unhealthy device is tainted or left out, and the pool generation rises",
          "[dra][publisher]") {
  Env env;
  const bool taints = GENERATE(false, true);
  NodeDeviceInfo n = Node("trn2.48xlarge");
  SlicePublisher p = env.Publisher();
  REQUIRE(p.Publish(Build(n, {.device_taints = taints})).ok());
  const size_t patches = env.fake.RequestCount("PATCH", "");

  n.health[3] = {false, "NC_UNCORRECTABLE_ERROR", false, absl::InfinitePast()};
  REQUIRE(p.Publish(Build(n, {.device_taints = taints})).ok());
  CHECK(env.fake.RequestCount("PATCH", "") == patches + 1);
  CHECK(p.pool_generation() == 2);
  json slice = env.Slice(0);
  CHECK(slice["spec"]["pool"]["generation"] == 2);
  const json* d3 = FindDevice(slice, "neurondevice3");
  if (taints) {
    REQUIRE(d3 != nullptr);
    CHECK(slice["spec"]["devices"].size() == 16);
    CHECK((*d3)["taints"] == json::array({{{"key", "neuron.aws.com/unhealthy"},
                                           {"value", "NC_UNCORRECTABLE_ERROR"},
                                           {"effect", "NoSchedule"}}}));
  } else {
    CHECK(d3 == nullptr);
    CHECK(slice["spec"]["devices"].size() == 15);
  }

  n.health.erase(3);
  REQUIRE(p.Publish(Build(n, {.device_taints = taints})).ok());
  slice = env.Slice(0);
  CHECK(slice["spec"]["pool"]["generation"] == 3);
  REQUIRE(FindDevice(slice, "neurondevice3") != nullptr);
  CHECK_FALSE(FindDevice(slice, "neurondevice3")->contains("taints"));
}

TEST_CASE("a shape change that needs fewer slices deletes the extra one", "[dra][publisher]") {
  Env env;
  SlicePublisher p = env.Publisher();
  REQUIRE(p.Publish(Build(Node("trn2.48xlarge", 1), {.partitionable = true})).ok());
  REQUIRE(env.Slice(1).is_object());
  CHECK(env.Slice(0)["spec"]["pool"]["resourceSliceCount"] == 2);

  // LNC 2: 16 x (1 + 4) devices fit one slice.
  const auto one = Build(Node("trn2.48xlarge", 2), {.partitionable = true});
  REQUIRE(one.size() == 1);
  REQUIRE(p.Publish(one).ok());
  CHECK(env.Slice(1).is_null());
  const json slice = env.Slice(0);
  CHECK(slice["spec"]["pool"] ==
        json{{"name", kNode}, {"generation", 2}, {"resourceSliceCount", 1}});
  CHECK(slice["spec"]["devices"].size() == 80);
  CHECK(env.fake.RequestCount("DELETE", SliceName(1)) == 1);

  // Publishing nothing removes the pool.
  REQUIRE(p.Publish({}).ok());
  CHECK(env.Slice(0).is_null());
}

TEST_CASE("stale slices of this node and driver go; others stay", "[dra][publisher]") {
  Env env;
  auto put = [&](const std::string& name, const std::string& node, const std::string& driver) {
    REQUIRE(env.fake
                .Put(kV1Slices + name,
                     {{"apiVersion", "resource.k8s.io/v1"},
                      {"kind", "ResourceSlice"},
                      {"metadata", {{"name", name}}},
                      {"spec",
                       {{"driver", driver},
                        {"nodeName", node},
                        {"pool", {{"name", node}, {"generation", 7}, {"resourceSliceCount", 1}}},
                        {"devices", json::array()}}}})
                .ok());
  };
  put(SliceName(5), kNode, "neuron.aws.com");  // e.g. from a larger shape before a restart
  put("other-node-slice", "ip-10-0-0-2.ec2.internal", "neuron.aws.com");
  put("other-driver-slice", kNode, "gpu.example.com");

  SlicePublisher p = env.Publisher();
  REQUIRE(p.Publish(Build(Node("inf2.xlarge"))).ok());
  CHECK(env.Slice(5).is_null());
  CHECK(env.fake.Get(std::string(kV1Slices) + "other-node-slice").is_object());
  CHECK(env.fake.Get(std::string(kV1Slices) + "other-driver-slice").is_object());
  // The generation continues above what the server had seen.
  CHECK(p.pool_generation() == 8);
  CHECK(env.Slice(0)["spec"]["pool"]["generation"] == 8);
}

TEST_CASE("a v1beta1-only server gets v1beta1 objects", "[dra][publisher]") {
  Env env;
  env.fake.DisableGroupVersion("resource.k8s.io/v1");
  SlicePublisher p = env.Publisher();
  NodeDeviceInfo n = Node("trn1.32xlarge");
  REQUIRE(p.Publish(Build(n)).ok());
  CHECK(p.api() == ResourceApi::kV1beta1);
  CHECK(env.fake.RequestCount("PATCH", kV1beta1Slices) == 1);
  const json slice = env.Slice(0, kV1beta1Slices);
  REQUIRE(slice.is_object());
  CHECK(slice["apiVersion"] == "resource.k8s.io/v1beta1");
  const json& d0 = slice["spec"]["devices"][0];
  CHECK(d0["name"] == "neurondevice0");
  CHECK(d0["basic"]["attributes"]["resourceType"] == json{{"string", "neuron_device"}});
  CHECK_FALSE(d0.contains("attributes"));

  // Unchanged: nothing; changed: a new generation, still at v1beta1.
  const size_t before = env.fake.RequestCount("", "");
  REQUIRE(p.Publish(Build(n)).ok());
  CHECK(env.fake.RequestCount("", "") == before);
  n.health[0] = {false, "gone", false, absl::InfinitePast()};
  REQUIRE(p.Publish(Build(n)).ok());
  CHECK(env.Slice(0, kV1beta1Slices)["spec"]["pool"]["generation"] == 2);
  CHECK(env.fake.RequestCount("", "/apis/resource.k8s.io/v1/resourceslices") == 0);
}

TEST_CASE("kUnavailable is retried with backoff; other errors return at once", "[dra][publisher]") {
  Env env;
  SlicePublisher p = env.Publisher();
  NodeDeviceInfo n = Node("inf2.xlarge");
  env.fake.InjectError("PATCH", "/resourceslices/", 503, 2);
  REQUIRE(p.Publish(Build(n)).ok());
  CHECK(env.clock.sleeps.size() == 2);
  CHECK(env.clock.sleeps[1] > env.clock.sleeps[0]);
  CHECK(env.fake.RequestCount("PATCH", "/resourceslices/") == 3);

  n.health[0] = {false, "gone", false, absl::InfinitePast()};
  env.fake.InjectError("PATCH", "/resourceslices/", 403, 1);
  absl::Status denied = p.Publish(Build(n));
  CHECK(absl::IsPermissionDenied(denied));
  CHECK(denied.message().find("apply ResourceSlice " + SliceName(0)) != std::string::npos);
  CHECK(env.fake.RequestCount("PATCH", "/resourceslices/") == 4);
  CHECK(env.clock.sleeps.size() == 2);

  // The failure made it re-read the server; this time it goes through.
  REQUIRE(p.Publish(Build(n)).ok());
  CHECK(FindDevice(env.Slice(0), "neurondevice0") == nullptr);

  env.fake.InjectError("", "/resourceslices", 503, 100);
  p.Invalidate();
  absl::Status gave_up = p.Publish(Build(n));
  CHECK(absl::IsUnavailable(gave_up));
  CHECK(env.clock.sleeps.size() == 2 + 4);  // 5 attempts
}

TEST_CASE("clear errors: no DRA API, no Node, slices of another node", "[dra][publisher]") {
  Env env;
  SECTION("no resource.k8s.io") {
    env.fake.DisableGroupVersion("resource.k8s.io/v1");
    env.fake.DisableGroupVersion("resource.k8s.io/v1beta1");
    SlicePublisher p = env.Publisher();
    absl::Status s = p.Publish(Build(Node("inf2.xlarge")));
    CHECK(absl::IsFailedPrecondition(s));
    CHECK(s.message().find("resource.k8s.io") != std::string::npos);
  }
  SECTION("the Node does not exist") {
    SlicePublisher p(*env.client, "ghost", {.clock = &env.clock});
    NodeDeviceInfo n = Node("inf2.xlarge");
    n.node_name = "ghost";
    absl::Status s = p.Publish(Build(n));
    CHECK(absl::IsNotFound(s));
    CHECK(s.message().find("Node ghost") != std::string::npos);
  }
  SECTION("input for another node writes nothing") {
    NodeDeviceInfo n = Node("inf2.xlarge");
    n.node_name = "ip-10-9-9-9.ec2.internal";
    SlicePublisher p = env.Publisher();
    const size_t before = env.fake.RequestCount("", "");
    CHECK(absl::IsInvalidArgument(p.Publish(Build(n))));
    CHECK(env.fake.RequestCount("", "") == before);
  }
}

}  // namespace
}  // namespace neuron::dra
