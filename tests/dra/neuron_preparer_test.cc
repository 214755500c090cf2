// NeuronPreparer with real files (CDI directory, checkpoint) in a temporary directory: what the
// container gets, idempotence across repeats and restarts, a crash between its steps, a device
// never handed out twice, and every bad claim as an error that leaves nothing behind. The claim
// source is an in-memory map here; api_claim_source is tested against the fake apiserver below.
#include "lib/dra/neuron_preparer.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "lib/dra/api_claim_source.h"
#include "lib/dra/cdi_spec.h"
#include "lib/k8s/transport.h"
#include "nlohmann/json.hpp"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/sysfs/temp_dir.h"

namespace neuron::dra {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using sysfs::testing::TempDir;

constexpr char kPreparerNode[] = "node-a";

// Claims by UID; counts reads so a test can tell an answer from the checkpoint from a new one.
class MapSource final : public ClaimSource {
 public:
  absl::StatusOr<json> Get(const ClaimRef& c) override {
    ++reads;
    auto it = claims.find(c.uid);
    if (it == claims.end()) {
      return absl::NotFoundError("resourceclaims \"" + c.name + "\" not found");
    }
    return it->second;
  }
  std::map<std::string, json> claims;
  int reads = 0;
};

json Claim(const std::string& uid, const std::vector<std::string>& devices,
           std::optional<int> lnc = std::nullopt) {
  json results = json::array();
  for (const std::string& d : devices) {
    results.push_back({{"request", "neurons"},
                       {"driver", "neuron.aws.com"},
                       {"pool", kPreparerNode},
                       {"device", d}});
  }
  json config = json::array();
  if (lnc) {
    config.push_back({{"source", "FromClaim"},
                      {"opaque",
                       {{"driver", "neuron.aws.com"},
                        {"parameters",
                         {{"apiVersion", "neuron.aws.com/v1"},
                          {"kind", "NeuronConfig"},
                          {"logicalNeuronCore", *lnc}}}}}});
  }
  return {{"metadata", {{"namespace", "ml"}, {"name", "claim-" + uid}, {"uid", uid}}},
          {"status", {{"allocation", {{"devices", {{"results", results}, {"config", config}}}}}}}};
}

ClaimRef Ref(const std::string& uid) { return {"ml", "claim-" + uid, uid}; }

struct PreparerEnv {
  // trn2-like by default: 16 devices, 8 physical cores, LNC 2.
  NodeFacts node{16, 8, 2, true, {}};
  TempDir dir;
  MapSource source;
  std::string cdi_dir() const { return dir.path() + "/cdi"; }
  std::string checkpoint() const { return dir.path() + "/state/checkpoint.json"; }
  std::unique_ptr<NeuronPreparer> Make() {
    fs::create_directories(cdi_dir());
    NeuronPreparerOptions o;
    o.node_name = kPreparerNode;
    o.cdi_dir = cdi_dir();
    o.checkpoint_path = checkpoint();
    o.device_host_path = "/dev/null";
    o.node_facts = [this]() -> absl::StatusOr<NodeFacts> { return node; };
    auto p = NeuronPreparer::Create(o, source);
    REQUIRE(p.ok());
    return *std::move(p);
  }
  json Spec(const std::string& uid) const {
    std::ifstream in(cdi_dir() + "/" + CdiSpecFileName(uid));
    REQUIRE(in.good());
    return json::parse(in);
  }
  bool HasSpec(const std::string& uid) const {
    return fs::exists(cdi_dir() + "/" + CdiSpecFileName(uid));
  }
};

std::vector<std::string> EnvOf(const json& spec) {
  return spec["devices"][0]["containerEdits"].value("env", std::vector<std::string>{});
}

std::vector<std::string> NodesOf(const json& spec) {
  std::vector<std::string> out;
  for (const json& n : spec["devices"][0]["containerEdits"]["deviceNodes"]) {
    out.push_back(n["path"].get<std::string>() + "<-" + n.value("hostPath", ""));
  }
  return out;
}

TEST_CASE("a prepared claim's container gets its devices and cores", "[dra][prepare]") {
  PreparerEnv env;
  env.source.claims["u1"] = Claim("u1", {"neurondevice5", "neurondevice2"});
  env.source.claims["u2"] = Claim("u2", {"neurondevice3-core1", "neurondevice3-core2"});
  auto p = env.Make();
  auto r = p->Prepare({Ref("u1"), Ref("u2")});
  REQUIRE(r.at("u1").ok());
  REQUIRE(r.at("u1")->size() == 2);
  CHECK(r.at("u1")->at(0).device == "neurondevice5");
  CHECK(r.at("u1")->at(0).pool == kPreparerNode);
  CHECK(r.at("u1")->at(0).request_names == std::vector<std::string>{"neurons"});
  CHECK(r.at("u1")->at(0).cdi_device_ids == std::vector<std::string>{CdiDeviceId("u1")});
  // Container numbering: /dev/neuron2 and /dev/neuron5 are devices 0 and 1 inside, 4 logical
  // cores each at LNC 2.
  CHECK(NodesOf(env.Spec("u1")) ==
        std::vector<std::string>{"/dev/neuron2<-/dev/null", "/dev/neuron5<-/dev/null"});
  CHECK(EnvOf(env.Spec("u1")) ==
        std::vector<std::string>{"NEURON_RT_VISIBLE_CORES=0-7", "NEURON_LOGICAL_NC_CONFIG=2"});
  REQUIRE(r.at("u2").ok());
  CHECK(NodesOf(env.Spec("u2")) == std::vector<std::string>{"/dev/neuron3<-/dev/null"});
  CHECK(EnvOf(env.Spec("u2")) ==
        std::vector<std::string>{"NEURON_RT_VISIBLE_CORES=1-2", "NEURON_LOGICAL_NC_CONFIG=2"});
}

TEST_CASE("a claim's NeuronConfig sets the LNC of whole devices", "[dra][prepare]") {
  PreparerEnv env;
  env.source.claims["u1"] = Claim("u1", {"neurondevice0"}, 1);
  auto p = env.Make();
  REQUIRE(p->Prepare({Ref("u1")}).at("u1").ok());
  CHECK(EnvOf(env.Spec("u1")) ==
        std::vector<std::string>{"NEURON_RT_VISIBLE_CORES=0-7", "NEURON_LOGICAL_NC_CONFIG=1"});
}

TEST_CASE("chips without LNC get no LNC variable", "[dra][prepare]") {
  PreparerEnv env;
  env.node = {16, 2, 1, false, {}};  // trn1
  env.source.claims["u1"] = Claim("u1", {"neurondevice1"});
  auto p = env.Make();
  REQUIRE(p->Prepare({Ref("u1")}).at("u1").ok());
  CHECK(EnvOf(env.Spec("u1")) == std::vector<std::string>{"NEURON_RT_VISIBLE_CORES=0-1"});
}

TEST_CASE("repeats and restarts answer from the checkpoint", "[dra][prepare]") {
  PreparerEnv env;
  env.source.claims["u1"] = Claim("u1", {"neurondevice1"});
  std::vector<PreparedDevice> first;
  {
    auto p = env.Make();
    first = *p->Prepare({Ref("u1")}).at("u1");
    CHECK(*p->Prepare({Ref("u1")}).at("u1") == first);
    CHECK(env.source.reads == 1);
  }
  env.source.claims.clear();  // the API is unreachable or the claim is gone: still the answer
  auto restarted = env.Make();
  CHECK(restarted->PreparedClaims() == std::vector<std::string>{"u1"});
  CHECK(*restarted->Prepare({Ref("u1")}).at("u1") == first);
  CHECK(env.source.reads == 1);
  CHECK(restarted->Unprepare({Ref("u1")}).at("u1").ok());
  CHECK_FALSE(env.HasSpec("u1"));
  CHECK(restarted->PreparedClaims().empty());
  CHECK(restarted->Unprepare({Ref("u1")}).at("u1").ok());  // repeated: still fine
}

TEST_CASE("a crash between the steps is repaired by the kubelet's retry", "[dra][prepare]") {
  PreparerEnv env;
  env.source.claims["u1"] = Claim("u1", {"neurondevice4"});
  {
    // What a crash after "preparing" and a half-finished CDI step leaves.
    Checkpoint cp;
    cp.claims["u1"] = {"ml",
                       "claim-u1",
                       ClaimState::kPreparing,
                       {{{"neurons"}, kPreparerNode, "neurondevice4", {}}},
                       {}};
    fs::create_directories(fs::path(env.checkpoint()).parent_path());
    REQUIRE(SaveCheckpoint(env.checkpoint(), cp).ok());
    fs::create_directories(env.cdi_dir());
    std::ofstream(env.cdi_dir() + "/" + CdiSpecFileName("u1")) << "{\"torn";
  }
  auto p = env.Make();
  CHECK(p->PreparedClaims().empty());
  auto r = p->Prepare({Ref("u1")});
  REQUIRE(r.at("u1").ok());
  CHECK(NodesOf(env.Spec("u1")) == std::vector<std::string>{"/dev/neuron4<-/dev/null"});
  CHECK(p->PreparedClaims() == std::vector<std::string>{"u1"});
}

TEST_CASE("a device is never handed out twice", "[dra][prepare]") {
  PreparerEnv env;
  env.source.claims["a"] = Claim("a", {"neurondevice1"});
  env.source.claims["b"] = Claim("b", {"neurondevice1-core0"});
  env.source.claims["c"] = Claim("c", {"neurondevice2-core0"});
  env.source.claims["d"] = Claim("d", {"neurondevice2-core1"});
  auto p = env.Make();
  REQUIRE(p->Prepare({Ref("a")}).at("a").ok());
  auto b = p->Prepare({Ref("b")}).at("b");
  CHECK(absl::IsUnavailable(b.status()));  // the kubelet retries
  CHECK(b.status().message().find("ml/claim-a") != std::string::npos);
  CHECK_FALSE(env.HasSpec("b"));
  // Two cores of one device for two claims do not overlap.
  CHECK(p->Prepare({Ref("c"), Ref("d")}).at("d").ok());
  REQUIRE(p->Unprepare({Ref("a")}).at("a").ok());
  CHECK(p->Prepare({Ref("b")}).at("b").ok());
}

TEST_CASE("bad claims fail with a reason and leave nothing behind", "[dra][prepare]") {
  PreparerEnv env;
  env.source.claims["lnc-core"] = Claim("lnc-core", {"neurondevice0-core0"}, 1);
  env.source.claims["far"] = Claim("far", {"neurondevice16"});
  env.source.claims["far-core"] = Claim("far-core", {"neurondevice0-core4"});
  auto p = env.Make();
  auto r = p->Prepare({Ref("lnc-core"), Ref("far"), Ref("far-core"), Ref("missing")});
  CHECK(r.at("lnc-core").status().message().find("partitions") != std::string::npos);
  CHECK(absl::IsFailedPrecondition(r.at("far").status()));
  CHECK(absl::IsFailedPrecondition(r.at("far-core").status()));  // 4 logical cores at LNC 2
  CHECK(absl::IsNotFound(r.at("missing").status()));
  CHECK(r.at("missing").status().message().find("read ResourceClaim ml/claim-missing") !=
        std::string::npos);
  CHECK(p->PreparedClaims().empty());
  CHECK(fs::is_empty(env.cdi_dir()));

  PreparerEnv trn1;
  trn1.node = {16, 2, 1, false, {}};
  trn1.source.claims["u"] = Claim("u", {"neurondevice0"}, 2);
  auto q = trn1.Make();
  auto lnc2 = q->Prepare({Ref("u")}).at("u");
  CHECK(absl::IsInvalidArgument(lnc2.status()));
  CHECK(lnc2.status().message().find("Trainium2") != std::string::npos);
}

TEST_CASE("an unreadable checkpoint is kept aside and the driver starts", "[dra][prepare]") {
  PreparerEnv env;
  fs::create_directories(fs::path(env.checkpoint()).parent_path());
  std::ofstream(env.checkpoint()) << R"({"kind":"NeuronDraCheckpoint","version":1,"claims":{)";
  env.source.claims["u1"] = Claim("u1", {"neurondevice0"});
  auto p = env.Make();
  CHECK(p->PreparedClaims().empty());
  int kept = 0;
  for (const auto& e : fs::directory_iterator(fs::path(env.checkpoint()).parent_path())) {
    if (e.path().filename().string().rfind("checkpoint.json.unreadable-", 0) == 0) ++kept;
  }
  CHECK(kept == 1);
  CHECK(p->Prepare({Ref("u1")}).at("u1").ok());
  // Unprepare works by UID even for a claim only the lost checkpoint knew.
  std::ofstream(env.cdi_dir() + "/" + CdiSpecFileName("old")) << "{}";
  CHECK(p->Unprepare({Ref("old")}).at("old").ok());
  CHECK_FALSE(env.HasSpec("old"));
}

TEST_CASE("claims are read from the served resource.k8s.io version", "[dra][prepare][api]") {
  fakes::FakeApiServer fake;
  REQUIRE(fake.Start().ok());
  k8s::ClientConfig cfg;
  cfg.server = fake.url();
  auto transport = k8s::NewHttpTransport(cfg);
  REQUIRE(transport.ok());
  k8s::RestClient client(*transport);
  std::string version = "v1";
  SECTION("v1") {}
  SECTION("v1beta1 only (Kubernetes 1.32/1.33)") {
    fake.DisableGroupVersion("resource.k8s.io/v1");
    version = "v1beta1";
  }
  REQUIRE(fake.Put("/api/v1/namespaces/ml",
                   {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "ml"}}}})
              .ok());
  json claim = Claim("", {"neurondevice1"});
  claim["apiVersion"] = "resource.k8s.io/" + version;
  claim["kind"] = "ResourceClaim";
  claim["metadata"]["name"] = "train";
  claim["metadata"].erase("uid");
  const std::string path =
      "/apis/resource.k8s.io/" + version + "/namespaces/ml/resourceclaims/train";
  REQUIRE(fake.Put(path, claim).ok());
  const std::string uid = fake.Get(path)["metadata"]["uid"];

  ApiClaimSource source(client);
  auto got = source.Get({"ml", "train", uid});
  REQUIRE(got.ok());
  CHECK((*got)["apiVersion"] == "resource.k8s.io/" + version);
  CHECK((*got)["metadata"]["uid"] == uid);
  CHECK(fake.RequestCount("GET", "/apis/resource.k8s.io/" + version +
                                     "/namespaces/ml/resourceclaims/train") == 1);
  CHECK(absl::IsNotFound(source.Get({"ml", "nope", "x"}).status()));
}

}  // namespace
}  // namespace neuron::dra
