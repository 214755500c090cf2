// File: tests/deviceplugin/pod_handshake_api_test.cc
// The pod handshake over real HTTP against the fake kube-apiserver, for both PodDirectory
// implementations (K8sPodDirectory lists per call, CachedPodDirectory reads an informer cache):
// node scoping, the extender's annotations feeding GetPreferredAllocation (through a real
// endpoint and the fake kubelet), patches that touch only our keys, injected 409/5xx, and the
// cache following adds/annotations/deletes.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "lib/assignment/annotations.h"
#include "lib/base/json_prune.h"
#include "lib/deviceplugin/allocator.h"
#include "lib/deviceplugin/handshake.h"
#include "lib/deviceplugin/k8s_pod_directory.h"
#include "lib/deviceplugin/plugin_server.h"
#include "lib/deviceplugin/pod_cache.h"
#include "lib/deviceplugin/ultraserver_env.h"
#include "lib/k8s/errors.h"
#include "lib/k8s/resource.h"
#include "lib/k8s/rest_client.h"
#include "lib/k8s/transport.h"
#include "lib/topology/topology.h"
#include "tests/deviceplugin/fake_device_source.h"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/fakes/kubelet/fake_kubelet.h"
#include "tests/testing/subprocess.h"

namespace neuron::deviceplugin {
namespace {

using neuron::testing::Eventually;
using nlohmann::json;

constexpr char kNode[] = "node-a";
constexpr absl::Duration kHandshakeWait = absl::Seconds(10);
// An OVN-Kubernetes annotation: nested JSON in a string, quotes, slashes, non-ASCII.
const std::string kOvn =
    R"({"default":{"ip_addresses":["10.128.2.17/23"],"mac_address":"0a:58:0a:80:02:11",)"
    R"("gateway_ips":["10.128.2.1"],"routes":[{"dest":"10.128.0.0/14","nextHop":"10.128.2.1"}],)"
    "\"role\":\"primary\",\"note\":\"caf\xc3\xa9 \\u00e9\\n\"}}";

std::string PodPath(const std::string& ns, const std::string& name) {
  return "/api/v1/namespaces/" + ns + "/pods/" + name;
}

json Extender(const std::string& ids, const std::string& type, const std::string& time) {
  return {{assignment::kAnnotationIds, ids},           {assignment::kAnnotationType, type},
          {assignment::kAnnotationAllocated, "false"}, {assignment::kAnnotationAllocTime, time},
          {"k8s.ovn.org/pod-networks", kOvn},          {"team", "infra"}};
}

class Api {
 public:
  Api() {
    REQUIRE(server.Start().ok());
    k8s::ClientConfig cfg;
    cfg.server = server.url();
    k8s::RetryOptions retry;
    retry.max_attempts = 3;
    retry.backoff = {absl::Milliseconds(5), absl::Milliseconds(50), 2.0, 0.0};
    auto transport = k8s::NewTransport(cfg, {}, retry);
    REQUIRE(transport.ok());
    client = std::make_shared<k8s::RestClient>(*transport);
  }

  void CreatePod(const std::string& ns, const std::string& name, const std::string& node,
                 const json& annotations, const std::string& resource = "aws.amazon.com/neuroncore",
                 int count = 2) {
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"namespace", ns}, {"labels", {{"app", name}}}}},
                {"spec",
                 {{"containers",
                   {{{"name", "main"},
                     {"image", "trainer:1"},
                     {"resources",
                      {{"requests", {{"cpu", "4"}, {resource, std::to_string(count)}}},
                       {"limits", {{resource, std::to_string(count)}}}}}}}},
                  {"volumes", {{{"name", "scratch"}, {"emptyDir", json::object()}}}}}}};
    if (!annotations.is_null()) pod["metadata"]["annotations"] = annotations;
    if (!node.empty()) pod["spec"]["nodeName"] = node;
    auto created = client->Create(k8s::resources::kPods, ns, pod);
    REQUIRE(created.ok());
  }

  json Annotations(const std::string& ns, const std::string& name) const {
    return server.Get(PodPath(ns, name))["metadata"].value("annotations", json::object());
  }

  fakes::FakeApiServer server;
  std::shared_ptr<k8s::RestClient> client;
};

// One of the two directories; Settle() waits until the cache agrees with the server.
class Directory {
 public:
  Directory(Api& api, bool cached) : api_(api) {
    if (cached) {
      k8s::ReflectorOptions o;
      o.backoff = {absl::Milliseconds(10), absl::Milliseconds(100), 2.0, 0.0};
      auto c = std::make_unique<CachedPodDirectory>(api.client, kNode, o);
      cached_ = c.get();
      cached_->Start();
      REQUIRE(cached_->WaitForSync(kHandshakeWait));
      dir_ = std::move(c);
    } else {
      dir_ = std::make_unique<K8sPodDirectory>(api.client, kNode);
    }
  }
  PodDirectory& get() { return *dir_; }
  CachedPodDirectory* cached() { return cached_; }

  // The cache holds each of `pods` ("ns/name") at the server's resourceVersion (or not at all
  // if the server has none).
  bool Settle(const std::vector<std::string>& pods) {
    if (cached_ == nullptr) return true;
    return Eventually(
        [&] {
          for (const std::string& key : pods) {
            const size_t slash = key.find('/');
            json want = api_.server.Get(PodPath(key.substr(0, slash), key.substr(slash + 1)));
            k8s::ObjectPtr have = cached_->store().Get(key);
            if (want.is_null() != (have == nullptr)) return false;
            if (have && (*have)["metadata"].value("resourceVersion", "") !=
                            want["metadata"].value("resourceVersion", "")) {
              return false;
            }
          }
          return true;
        },
        kHandshakeWait);
  }

 private:
  Api& api_;
  std::unique_ptr<PodDirectory> dir_;
  CachedPodDirectory* cached_ = nullptr;
};

void SetHoldings(fakes::FakeKubelet& kubelet, const std::string& ns, const std::string& name,
                 const std::string& resource, const std::vector<std::string>& ids) {
  v1::ListPodResourcesResponse resp;
  auto* pod = resp.add_pod_resources();
  pod->set_namespace_(ns);
  pod->set_name(name);
  auto* c = pod->add_containers();
  c->set_name("main");
  auto* d = c->add_devices();
  d->set_resource_name(resource);
  for (const auto& id : ids) d->add_device_ids(id);
  kubelet.SetPodResources(resp);
}

std::vector<std::string> Keys(const std::vector<PodAnnotations>& pods) {
  std::vector<std::string> out;
  for (const auto& p : pods) out.push_back(p.ns + "/" + p.name);
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("Pod directories over HTTP list only this node's pods", "[api][integration]") {
  const bool cached = GENERATE(false, true);
  INFO("cached=" << cached);
  Api api;
  api.CreatePod("ml", "a", kNode, Extender("0,1", "neuroncore", "10"));
  api.CreatePod("ml", "b", "node-b", Extender("2,3", "neuroncore", "20"));
  api.CreatePod("kube", "c", kNode, nullptr);
  api.CreatePod("ml", "unscheduled", "", nullptr);
  Directory dir(api, cached);
  REQUIRE(dir.Settle({"ml/a", "kube/c"}));
  auto pods = dir.get().ListNodePods();
  REQUIRE(pods.ok());
  CHECK(Keys(*pods) == std::vector<std::string>{"kube/c", "ml/a"});
  for (const auto& p : *pods) {
    if (p.name == "a") {
      CHECK(p.annotations.at(assignment::kAnnotationIds) == "0,1");
      // The cache keeps the handshake's keys only; a direct list decodes every annotation.
      if (cached) {
        CHECK_FALSE(p.annotations.contains("k8s.ovn.org/pod-networks"));
      } else {
        CHECK(p.annotations.at("k8s.ovn.org/pod-networks") == kOvn);
      }
    } else {
      CHECK(p.annotations.empty());
    }
  }
}

TEST_CASE("Extender annotations in the API feed GetPreferredAllocation", "[api][integration]") {
  const bool cached = GENERATE(false, true);
  INFO("cached=" << cached);
  Api api;
  api.CreatePod("ml", "old", kNode, Extender("6,7", "neuroncore", "100"));
  api.CreatePod("ml", "new", kNode, Extender("2,3", "neuroncore", "200"));
  json done = Extender("0,1", "neuroncore", "50");
  done[assignment::kAnnotationAllocated] = "true";
  api.CreatePod("ml", "done", kNode, done);
  // Older than all of ours, but bound to another node: never a hint here.
  api.CreatePod("ml", "elsewhere", "node-b", Extender("4,5", "neuroncore", "1"));
  api.CreatePod("ml", "dev", kNode, Extender("4,5,6,7", "neuron", "300"), "aws.amazon.com/neuron",
                4);
  Directory dir(api, cached);
  REQUIRE(dir.Settle({"ml/old", "ml/new", "ml/done", "ml/dev"}));

  fakes::FakeKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  REQUIRE(kubelet.StartPodResources().ok());
  const std::string socket = kubelet.pod_resources_socket();
  Handshake hs(dir.get(), [socket] { return ListPodHoldings(socket); });
  const topology::Shape* shape = topology::FindShape("trn1.32xlarge");
  REQUIRE(shape != nullptr);
  testing::FakeDeviceSource source(testing::SnapshotForShape(*shape));
  Allocator dev_alloc(assignment::ResourceKind::kDevice),
      core_alloc(assignment::ResourceKind::kCore);
  PluginServer dev(dev_alloc, source, &hs, kubelet.dir() + "/aws-neuron.sock");
  PluginServer core(core_alloc, source, &hs, kubelet.dir() + "/aws-neuroncore.sock");
  REQUIRE(dev.Start().ok());
  REQUIRE(core.Start().ok());
  REQUIRE(RegisterWithKubelet(kubelet.kubelet_socket(), dev.endpoint(),
                              assignment::ResourceKind::kDevice)
              .ok());
  REQUIRE(RegisterWithKubelet(kubelet.kubelet_socket(), core.endpoint(),
                              assignment::ResourceKind::kCore)
              .ok());

  auto preferred = [&](const std::string& resource, int total, int size) {
    v1beta1::PreferredAllocationRequest req;
    auto* c = req.add_container_requests();
    for (int i = 0; i < total; ++i) c->add_available_deviceids(std::to_string(i));
    c->set_allocation_size(size);
    auto resp = kubelet.GetPreferredAllocation(resource, req);
    REQUIRE(resp.ok());
    REQUIRE(resp->container_responses_size() == 1);
    const auto& ids = resp->container_responses(0).deviceids();
    return std::vector<std::string>(ids.begin(), ids.end());
  };
  CHECK(preferred("aws.amazon.com/neuroncore", 32, 2) == std::vector<std::string>{"6", "7"});
  CHECK(preferred("aws.amazon.com/neuron", 16, 4) == std::vector<std::string>{"4", "5", "6", "7"});

  // The oldest pod gets its devices (the handshake marks it): the next hint is the newer pod's.
  SetHoldings(kubelet, "ml", "old", "aws.amazon.com/neuroncore", {"6", "7"});
  REQUIRE(hs.Reconcile().ok());
  CHECK(api.Annotations("ml", "old")[assignment::kAnnotationAllocated] == "true");
  REQUIRE(dir.Settle({"ml/old"}));
  CHECK(preferred("aws.amazon.com/neuroncore", 32, 2) == std::vector<std::string>{"2", "3"});
  dev.Stop();
  core.Stop();
}

TEST_CASE("The handshake patches only our annotation keys over HTTP", "[api][integration]") {
  const bool cached = GENERATE(false, true);
  INFO("cached=" << cached);
  Api api;
  api.CreatePod("ml", "train", kNode, Extender("4,5", "neuroncore", "1700000000000000000"));
  api.CreatePod("ml", "idle", kNode, Extender("0,1", "neuroncore", "1700000000000000001"));
  api.CreatePod("other", "train", "node-b", Extender("4,5", "neuroncore", "1700000000000000000"));
  const json before = api.server.Get(PodPath("ml", "train"));
  const json idle_before = api.server.Get(PodPath("ml", "idle"));
  const json other_before = api.server.Get(PodPath("other", "train"));
  Directory dir(api, cached);
  REQUIRE(dir.Settle({"ml/train", "ml/idle"}));

  fakes::FakeKubelet kubelet;
  REQUIRE(kubelet.StartPodResources().ok());
  // The kubelet gave the pod other cores than the extender wrote.
  SetHoldings(kubelet, "ml", "train", "aws.amazon.com/neuroncore", {"9", "8"});
  const std::string socket = kubelet.pod_resources_socket();
  Handshake hs(dir.get(), [socket] { return ListPodHoldings(socket); });
  REQUIRE(hs.Reconcile().ok());
  CHECK(hs.patches_applied() == 1);
  CHECK(api.server.RequestCount("PATCH", "/pods/") == 1);

  const json after = api.server.Get(PodPath("ml", "train"));
  json want = before["metadata"]["annotations"];
  want[assignment::kAnnotationIds] = "8,9";
  want[assignment::kAnnotationAllocated] = "true";
  CHECK(after["metadata"]["annotations"] == want);
  CHECK(after["metadata"]["annotations"]["k8s.ovn.org/pod-networks"].get<std::string>() == kOvn);
  CHECK(after["metadata"]["labels"] == before["metadata"]["labels"]);
  CHECK(after["spec"] == before["spec"]);
  CHECK(after["metadata"]["uid"] == before["metadata"]["uid"]);
  // Pods without holdings, and pods of other nodes, are untouched.
  CHECK(api.server.Get(PodPath("ml", "idle"))["metadata"] == idle_before["metadata"]);
  CHECK(api.server.Get(PodPath("other", "train"))["metadata"] == other_before["metadata"]);

  // Converged: a resync changes nothing.
  REQUIRE(dir.Settle({"ml/train"}));
  REQUIRE(hs.Reconcile().ok());
  CHECK(hs.patches_applied() == 1);
  CHECK(api.server.RequestCount("PATCH", "/pods/") == 1);
}

TEST_CASE("Injected API errors are retried or reported", "[api][integration]") {
  const bool cached = GENERATE(false, true);
  INFO("cached=" << cached);
  Api api;
  api.CreatePod("ml", "train", kNode, Extender("8,9", "neuroncore", "5"));
  Directory dir(api, cached);
  REQUIRE(dir.Settle({"ml/train"}));
  fakes::FakeKubelet kubelet;
  REQUIRE(kubelet.StartPodResources().ok());
  SetHoldings(kubelet, "ml", "train", "aws.amazon.com/neuroncore", {"8", "9"});
  const std::string socket = kubelet.pod_resources_socket();
  Handshake hs(dir.get(), [socket] { return ListPodHoldings(socket); });
  auto allocated = [&] { return api.Annotations("ml", "train")[assignment::kAnnotationAllocated]; };

  SECTION("409 on the patch is retried") {
    api.server.InjectError("PATCH", "/pods/train", 409, 2);
    REQUIRE(hs.Reconcile().ok());
    CHECK(api.server.RequestCount("PATCH", "/pods/train") == 3);
    CHECK(allocated() == "true");
  }
  SECTION("5xx on the patch is retried") {
    api.server.InjectError("PATCH", "/pods/train", 503, 2);
    REQUIRE(hs.Reconcile().ok());
    CHECK(allocated() == "true");
  }
  SECTION("persistent 5xx is reported, and the next resync succeeds") {
    api.server.InjectError("PATCH", "/pods/train", 500, 3);  // = max_attempts
    absl::Status s = hs.Reconcile();
    CHECK_FALSE(s.ok());
    CHECK(allocated() == "false");
    CHECK(hs.patches_applied() == 0);
    REQUIRE(hs.Reconcile().ok());
    CHECK(allocated() == "true");
  }
  SECTION("persistent 409 is reported as a conflict") {
    api.server.InjectError("PATCH", "/pods/train", 409, 5);  // = RetryOnConflict attempts
    CHECK(k8s::IsConflict(hs.Reconcile()));
    CHECK(allocated() == "false");
    REQUIRE(hs.Reconcile().ok());
    CHECK(allocated() == "true");
  }
  SECTION("a failing pod list") {
    if (dir.cached() != nullptr) {
      // The cache answers while every list and watch fails. (Counting GETs would race the
      // reflector, which relists and rewatches on its own as those fail.)
      api.server.InjectError("GET", "/pods", 503, 1000);
      CHECK(hs.HintFor(assignment::ResourceKind::kCore, 2) == std::vector<int>{8, 9});
    } else {
      api.server.InjectError("GET", "/pods", 503, 3);
      const size_t gets = api.server.RequestCount("GET", "/pods");
      CHECK_FALSE(hs.HintFor(assignment::ResourceKind::kCore, 2).has_value());
      CHECK(api.server.RequestCount("GET", "/pods") == gets + 3);
      CHECK(hs.HintFor(assignment::ResourceKind::kCore, 2) == std::vector<int>{8, 9});
    }
  }
}

TEST_CASE("The pod cache follows the API and keeps only what it needs", "[api][integration]") {
  Api api;
  Directory dir(api, true);
  CachedPodDirectory& cache = *dir.cached();
  fakes::FakeKubelet kubelet;
  REQUIRE(kubelet.StartPodResources().ok());
  const std::string socket = kubelet.pod_resources_socket();
  Handshake hs(cache, [socket] { return ListPodHoldings(socket); });
  CHECK(cache.store().size() == 0);
  CHECK_FALSE(hs.HintFor(assignment::ResourceKind::kCore, 2).has_value());

  // Bound first, annotated by the extender afterwards (as a bind would race).
  api.CreatePod("ml", "elsewhere", "node-b", Extender("0,1", "neuroncore", "1"));
  api.CreatePod("ml", "train", kNode, nullptr);
  REQUIRE(Eventually([&] { return cache.store().Get("ml/train") != nullptr; }, kHandshakeWait));
  CHECK_FALSE(hs.HintFor(assignment::ResourceKind::kCore, 2).has_value());
  json patch = {{"metadata", {{"annotations", Extender("10,11", "neuroncore", "7")}}}};
  REQUIRE(
      api.client->Patch(k8s::resources::kPods, "ml", "train", k8s::PatchType::kMerge, patch).ok());
  REQUIRE(Eventually([&] { return hs.HintFor(assignment::ResourceKind::kCore, 2).has_value(); },
                     kHandshakeWait));
  CHECK(hs.HintFor(assignment::ResourceKind::kCore, 2) == std::vector<int>{10, 11});
  CHECK(cache.store().Get("ml/elsewhere") == nullptr);  // field selector: other nodes never seen

  // Hints are cache reads: no requests to the API.
  const size_t requests = api.server.RequestCount("", "/pods");
  for (int i = 0; i < 20; ++i) CHECK(hs.HintFor(assignment::ResourceKind::kCore, 2).has_value());
  CHECK(api.server.RequestCount("", "/pods") == requests);

  // The cached object is pruned to identity and the handshake's keys.
  const json& cached = *cache.store().Get("ml/train");
  const json full = api.server.Get(PodPath("ml", "train"));
  CHECK(cached["metadata"]["uid"] == full["metadata"]["uid"]);
  json handshake_keys = full["metadata"]["annotations"];
  handshake_keys.erase("k8s.ovn.org/pod-networks");
  handshake_keys.erase("team");
  CHECK(cached["metadata"]["annotations"] == handshake_keys);
  CHECK_FALSE(cached["metadata"].contains("labels"));
  CHECK_FALSE(cached["metadata"].contains("managedFields"));
  CHECK_FALSE(cached.contains("spec"));

  // A relist after compaction (410 on the open watch) keeps the cache right.
  api.server.Compact(true);
  json patch2 = {{"metadata", {{"annotations", {{assignment::kAnnotationIds, "12,13"}}}}}};
  REQUIRE(
      api.client->Patch(k8s::resources::kPods, "ml", "train", k8s::PatchType::kMerge, patch2).ok());
  REQUIRE(Eventually(
      [&] {
        return hs.HintFor(assignment::ResourceKind::kCore, 2) == std::vector<int>{12, 13};
      },
      kHandshakeWait));

  // Deleted: gone from the cache, no hint.
  REQUIRE(api.client->Delete(k8s::resources::kPods, "ml", "train").ok());
  REQUIRE(Eventually([&] { return cache.store().size() == 0; }, kHandshakeWait));
  CHECK_FALSE(hs.HintFor(assignment::ResourceKind::kCore, 2).has_value());
}

TEST_CASE("An unsynced pod cache lists from the API", "[api][integration]") {
  Api api;
  api.CreatePod("ml", "a", kNode, Extender("0,1", "neuroncore", "10"));
  CachedPodDirectory cache(api.client, kNode);  // not started
  CHECK_FALSE(cache.HasSynced());
  const size_t lists = api.server.RequestCount("GET", "/pods");
  auto pods = cache.ListNodePods();
  REQUIRE(pods.ok());
  CHECK(Keys(*pods) == std::vector<std::string>{"ml/a"});
  CHECK(api.server.RequestCount("GET", "/pods") == lists + 1);
}

TEST_CASE("The pod cache keeps identity and the handshake's annotations only", "[api]") {
  const char* text = R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns", "uid": "u1", "resourceVersion": "7",
                 "labels": {"a": "b"},
                 "annotations": {"AWS_NEURON_IDS": "1", "NEURON_RESOURCE_TYPE": "neuron",
                                 "NEURON_ALLOCATED": "false", "NEURON_ALLOC_TIME": "5",
                                 "kubectl.kubernetes.io/last-applied-configuration": "{}"},
                 "managedFields": [{"manager": "kubectl"}], "ownerReferences": []},
    "spec": {"nodeName": "n", "serviceAccountName": "sa",
             "containers": [{"name": "m", "resources": {"requests":
                                 {"aws.amazon.com/neuroncore": "4", "cpu": "1"}}}]},
    "status": {"phase": "Running"}})";
  absl::StatusOr<json> pod = ParsePruned(text, PodCacheFields());
  REQUIRE(pod.ok());
  const json want = json::parse(R"({
    "metadata": {"name": "p", "namespace": "ns", "uid": "u1", "resourceVersion": "7",
                 "annotations": {"AWS_NEURON_IDS": "1", "NEURON_RESOURCE_TYPE": "neuron",
                                 "NEURON_ALLOCATED": "false", "NEURON_ALLOC_TIME": "5"}}})");
  CHECK(*pod == want);
  // What the handshake reads is the same from the pruned pod as from the whole one.
  const PodAnnotations from_pruned = PodAnnotationsOf(*pod);
  const PodAnnotations from_whole = PodAnnotationsOf(json::parse(text));
  CHECK(from_pruned.ns == "ns");
  CHECK(from_pruned.name == "p");
  CHECK(assignment::Parse(from_pruned.annotations).value() ==
        assignment::Parse(from_whole.annotations).value());
  CHECK(PodAnnotationsOf(json::parse(R"({"metadata": {"annotations": {"a": 1, "b": "x"}}})"))
            .annotations == std::map<std::string, std::string>{{"b", "x"}});
  CHECK(PodAnnotationsOf(json::array({1, 2})).annotations.empty());  // not an object
}

TEST_CASE("Pod directories keep an UltraServer group pod's placement for Allocate",
          "[api][integration]") {
  const bool cached = GENERATE(false, true);
  INFO("cached=" << cached);
  Api api;
  json ann = Extender("0-15", "neuron", "10");
  ann[kUsSetSizeAnnotation] = "4";
  ann[kUsServerIdAnnotation] = "bog79p1y8tetj5uu";
  ann[kUsNodeIdAnnotation] = "2";
  ann[kUsModeAnnotation] = "1";
  ann[kUsRankAnnotation] = "2";
  ann[kUsRank0HostAnnotation] = "a0";
  ann["unrelated"] = "dropped by the cache";
  api.CreatePod("ml", "four-2", kNode, ann, "aws.amazon.com/neuron", 16);
  Directory dir(api, cached);
  REQUIRE(dir.Settle({"ml/four-2"}));
  Handshake hs(dir.get(), [] { return std::vector<PodHoldings>{}; });
  std::vector<int> all(16);
  for (int i = 0; i < 16; ++i) all[i] = i;
  auto pod = hs.PendingPodFor(assignment::ResourceKind::kDevice, all);
  REQUIRE(pod);
  CHECK(HasPlacement(*pod));
  CHECK(pod->at(kUsRank0HostAnnotation) == "a0");
  CHECK(pod->at(kUsServerIdAnnotation) == "bog79p1y8tetj5uu");
  CHECK_FALSE(hs.PendingPodFor(assignment::ResourceKind::kDevice, {0, 1}));
  CHECK_FALSE(hs.PendingPodFor(assignment::ResourceKind::kCore, all));
}

}  // namespace
}  // namespace neuron::deviceplugin
