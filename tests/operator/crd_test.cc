// File: tests/operator/crd_test.cc
// deploy/operator/crd-deviceconfigs.yaml: what it declares (names, versions, one schema that
// holds every field the operator reads, the CEL rules, status and printer columns), then the
// CRD registered with the fake kube-apiserver over HTTP, both samples created through each
// served version and read back through both, and discovery.
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "catch2/catch.hpp"
#include "lib/operator/device_config.h"
#include "lib/operator/ultraservers.h"
#include "lib/operator/upgrade.h"
#include "lib/operator/yaml_input.h"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/fakes/apiserver/test_client.h"
#include "tests/operator/device_config_test_util.h"

namespace neuron::op {
namespace {

using fakes::testing::Call;
using nlohmann::json;
using spectest::LoadOne;

json Crd() { return LoadOne("deploy/operator/crd-deviceconfigs.yaml"); }

// Non-const lookups throughout: a const operator[] on a missing key is undefined behaviour,
// and a test of a file that lacks the key must fail, not crash.
json& Version(json& crd, const std::string& name) {
  for (json& v : crd["spec"]["versions"]) {
    if (v["name"] == name) return v;
  }
  FAIL("no version " << name);
  static json none;
  return none;
}

json SpecSchema(json& crd, const std::string& version) {
  return Version(crd, version)["schema"]["openAPIV3Schema"]["properties"]["spec"];
}

TEST_CASE("the CRD names the resource as the seed does, plus the short name dc",
          "[operator][crd]") {
  json crd = Crd();
  CHECK(crd["apiVersion"] == "apiextensions.k8s.io/v1");
  CHECK(crd["kind"] == "CustomResourceDefinition");
  CHECK(crd["metadata"]["name"] == std::string(kPlural) + "." + kGroup);
  json& spec = crd["spec"];
  CHECK(spec["group"] == kGroup);
  CHECK(spec["scope"] == "Namespaced");
  CHECK(spec["names"]["kind"] == kKind);
  CHECK(spec["names"]["plural"] == kPlural);
  CHECK(spec["names"]["singular"] == "deviceconfig");
  CHECK(spec["names"]["shortNames"] == json{"awslabsdc", "dc"});
  CHECK(spec["conversion"]["strategy"] == "None");
  REQUIRE(spec["versions"].size() == 2);
  CHECK(Version(crd, "v1alpha1")["served"] == true);
  CHECK(Version(crd, "v1alpha1")["storage"] == false);
  CHECK(Version(crd, "v1beta1")["served"] == true);
  CHECK(Version(crd, "v1beta1")["storage"] == true);
  CHECK(std::string("v1beta1") == kStorageVersion);
}

TEST_CASE("both versions carry one schema; only spec.required differs", "[operator][crd]") {
  json crd = Crd();
  json alpha = Version(crd, "v1alpha1");
  json beta = Version(crd, "v1beta1");
  CHECK(SpecSchema(crd, "v1alpha1")["required"] == json{"driversImage", "devicePluginImage",
                                                        "customSchedulerImage",
                                                        "schedulerExtensionImage"});
  CHECK(SpecSchema(crd, "v1beta1")["required"] == json{"nodeMetricsImage"});
  for (json* v : {&alpha, &beta}) {
    (*v)["schema"]["openAPIV3Schema"]["properties"]["spec"].erase("required");
    v->erase("name");
    v->erase("storage");
  }
  CHECK(alpha == beta);
  CHECK(beta["subresources"] == json{{"status", json::object()}});
}

TEST_CASE("the schema holds every spec field the operator reads, with the seed's types",
          "[operator][crd]") {
  json crd = Crd();
  json props = SpecSchema(crd, "v1beta1")["properties"];
  for (const char* f : {"driversImage", "driverVersion", "devicePluginImage",
                        "customSchedulerImage", "schedulerExtensionImage", "draDriverImage",
                        "nodeMetricsImage", "nodeAgentImage", "driverMode"}) {
    CAPTURE(f);
    CHECK(props[f]["type"] == "string");
  }
  CHECK(props["useInTreeDrivers"]["type"] == "boolean");
  CHECK(props["imageRepoSecret"]["properties"]["name"]["type"] == "string");
  CHECK(props["selector"]["additionalProperties"]["type"] == "string");
  CHECK(props["driverMode"]["enum"] == json{"kmm", "preinstalled"});
  CHECK(props["driverMode"]["default"] == "kmm");
  CHECK(props["driverVersion"]["maxLength"] == 63);  // it becomes a label value
  json& up = props["upgradePolicy"]["properties"];
  CHECK(up["maxParallel"]["type"] == "integer");
  CHECK(up["maxParallel"]["default"] == 1);
  CHECK(up["nodeTimeout"]["type"] == "string");
  CHECK(up["nodeTimeout"]["default"] == "15m");
  CHECK(up["paused"]["type"] == "boolean");
  // A field the operator reads but the schema lacks would be pruned by the API server.
  std::set<std::string> declared;
  for (const auto& [k, v] : props.items()) declared.insert(k);
  CHECK(declared ==
        std::set<std::string>{"driverMode", "useInTreeDrivers", "driversImage", "driverVersion",
                              "devicePluginImage", "customSchedulerImage",
                              "schedulerExtensionImage", "draDriverImage", "nodeMetricsImage",
                              "nodeAgentImage", "imageRepoSecret", "selector", "upgradePolicy",
                              "allocation", "dra", "kubeletRootDir", "emulation", "compileCache"});
  CHECK(props["compileCache"]["properties"]["enabled"]["type"] == "boolean");
  CHECK(props["compileCache"]["properties"]["enabled"]["default"] == true);
  CHECK(props["compileCache"]["properties"]["hostPath"]["default"] == "/var/lib/neuron/cache");
  CHECK(props["emulation"]["required"] == json{"instanceType"});
  CHECK(props["emulation"]["properties"]["instanceType"]["type"] == "string");
  CHECK(props["emulation"]["properties"]["lnc"]["type"] == "integer");
  CHECK(props["kubeletRootDir"]["type"] == "string");
  CHECK(props["kubeletRootDir"]["default"] == "/var/lib/kubelet");
  CHECK(props["allocation"]["enum"] == json{"devicePlugin", "dra", "mixed"});
  CHECK_FALSE(props["allocation"].contains("default"));  // unset: draDriverImage may decide
  for (const char* f : {"partitionableDevices", "deviceTaints", "extendedResource"}) {
    CAPTURE(f);
    CHECK(props["dra"]["properties"][f]["type"] == "boolean");
  }
}

TEST_CASE("the CEL rules guard every field with has() and treat \"\" as unset", "[operator][crd]") {
  json crd = Crd();
  json rules = SpecSchema(crd, "v1beta1")["x-kubernetes-validations"];
  REQUIRE(rules.size() == 5);
  for (size_t i = 0; i < rules.size(); ++i) {
    const std::string rule = rules[i]["rule"];
    CAPTURE(rule);
    CHECK_FALSE(rules[i].value("message", "").empty());
    // The image rules (the first three) read the plugin and scheduler images as "set".
    for (const char* f : {"devicePluginImage", "customSchedulerImage", "schedulerExtensionImage"}) {
      const std::string guarded = std::string("(has(self.") + f + ") && size(self." + f + ") > 0)";
      if (i < 3) CHECK(absl::StrContains(rule, guarded));
    }
    // Reading an absent field is an evaluation error in CEL: every field read is guarded by
    // its has() in the same rule.
    for (size_t at = rule.find("self."); at != std::string::npos; at = rule.find("self.", at + 1)) {
      size_t end = at + 5;
      while (end < rule.size() && absl::ascii_isalnum(static_cast<unsigned char>(rule[end]))) {
        ++end;
      }
      const std::string field = rule.substr(at, end - at);
      CAPTURE(field);
      CHECK(absl::StrContains(rule, "has(" + field + ")"));
    }
    size_t reads = 0;
    size_t guards = 0;
    for (size_t at = rule.find("size(self."); at != std::string::npos;
         at = rule.find("size(self.", at + 1)) {
      ++reads;
    }
    for (size_t at = rule.find("has(self."); at != std::string::npos;
         at = rule.find("has(self.", at + 1)) {
      ++guards;
    }
    CHECK(reads <= guards);
  }
  CHECK(absl::StrContains(rules[0]["rule"].get<std::string>(), "has(self.draDriverImage)"));
  // allocation dra lifts the plugin/extender pairing, and has its own rule.
  CHECK(absl::StartsWith(rules[1]["rule"].get<std::string>(),
                         "(has(self.allocation) && self.allocation == 'dra') ||"));
  CHECK(absl::StrContains(rules[3]["message"].get<std::string>(), "excludes allocation and dra"));
  CHECK(rules == SpecSchema(crd, "v1alpha1")["x-kubernetes-validations"]);
}

TEST_CASE("status: conditions as a list-map, the seed's counters, summaries for the columns",
          "[operator][crd]") {
  json crd = Crd();
  json status = Version(crd, "v1beta1")["schema"]["openAPIV3Schema"]["properties"]["status"];
  json& p = status["properties"];
  CHECK_FALSE(status.contains("required"));
  CHECK(p["observedGeneration"]["type"] == "integer");
  CHECK(p["observedGeneration"]["format"] == "int64");
  json& cond = p["conditions"];
  CHECK(cond["type"] == "array");
  CHECK(cond["x-kubernetes-list-type"] == "map");
  CHECK(cond["x-kubernetes-list-map-keys"] == json{"type"});
  CHECK(cond["items"]["required"] ==
        json{"type", "status", "lastTransitionTime", "reason", "message"});
  CHECK(cond["items"]["properties"]["status"]["enum"] == json{"True", "False", "Unknown"});
  for (const char* c : {"driver", "devicePlugin", "scheduler", "metrics", "draDriver"}) {
    for (const char* n : {"nodesMatchingSelectorNumber", "desiredNumber", "availableNumber"}) {
      CAPTURE(c, n);
      CHECK(p[c]["properties"][n]["type"] == "integer");
      CHECK(p[c]["properties"][n]["format"] == "int32");
    }
  }
  for (const char* s :
       {"driverSummary", "devicePluginSummary", "schedulerSummary", "draDriverSummary"}) {
    CHECK(p[s]["type"] == "string");
  }
  // The real API server prunes what the schema does not name: every field the operator writes
  // for a node's upgrade must be there.
  CHECK(p["nodes"]["type"] == "array");
  NodeUpgrade entry{"trn-a", "2.29.0", NodeUpgradeState::kFailed, absl::UnixEpoch(), "why"};
  const json written = ToJson(entry);
  for (const auto& [key, value] : written.items()) {
    CAPTURE(key);
    CHECK(p["nodes"]["items"]["properties"].contains(key));
  }
  for (const char* k :
       {"driverVersion", "nodesDone", "nodesUpgrading", "nodesPending", "nodesFailed"}) {
    CAPTURE(k);
    CHECK(p["upgrade"]["properties"].contains(k));
  }

  json& cols = Version(crd, "v1beta1")["additionalPrinterColumns"];
  std::vector<std::string> names;
  for (json& c : cols) {
    names.push_back(c["name"]);
    const std::string path = c["jsonPath"];
    if (absl::StartsWith(path, ".status.") && !absl::StrContains(path, "[")) {
      CAPTURE(path);  // a summary column must name a status field the schema declares
      CHECK(p.contains(path.substr(8)));
    }
  }
  CHECK(names == std::vector<std::string>{"Ready", "Driver", "Plugin", "Scheduler", "DRA", "Age"});
  CHECK(cols[0]["jsonPath"] == R"(.status.conditions[?(@.type=="Ready")].status)");
  CHECK(cols[4]["priority"] == 1);  // DRA: with -o wide
  CHECK(cols[5]["type"] == "date");
  CHECK(cols[5]["jsonPath"] == ".metadata.creationTimestamp");
}

struct Server {
  Server() {
    REQUIRE(server.Start().ok());
    auto crd = Call(server.port(), "POST",
                    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", Crd());
    CAPTURE(crd.body.dump());
    REQUIRE(crd.status == 201);
    auto ns = Call(server.port(), "POST", "/api/v1/namespaces",
                   json{{"apiVersion", "v1"},
                        {"kind", "Namespace"},
                        {"metadata", {{"name", "aws-neuron-operator"}}}});
    REQUIRE(ns.status == 201);
  }
  fakes::FakeApiServer server;
};

std::string Collection(const std::string& version) {
  return "/apis/k8s.aws/" + version + "/namespaces/aws-neuron-operator/deviceconfigs";
}

TEST_CASE("a version's required fields bind writes at that version, ratcheted on update",
          "[operator][crd][apiserver]") {
  Server s;
  const int port = s.server.port();
  // Written through v1alpha1 without nodeMetricsImage, which only v1beta1 requires.
  json obj = LoadOne("deploy/operator/samples/deviceconfig-v1alpha1.yaml");
  obj["spec"].erase("nodeMetricsImage");
  obj["metadata"]["name"] = "alpha";
  REQUIRE(Call(port, "POST", Collection("v1alpha1"), obj).status == 201);
  json read = Call(port, "GET", Collection("v1beta1") + "/alpha").body;
  REQUIRE(read["apiVersion"] == "k8s.aws/v1beta1");
  // An update at v1beta1 that leaves spec alone passes (validation ratcheting) ...
  read["metadata"]["finalizers"] = {"k8s.aws/cleanup"};
  auto finalizer = Call(port, "PUT", Collection("v1beta1") + "/alpha", read);
  CAPTURE(finalizer.body.dump());
  CHECK(finalizer.status == 200);
  // ... one that changes spec is held to v1beta1's schema.
  read = finalizer.body;
  read["spec"]["driverVersion"] = "2.30.0";
  auto changed = Call(port, "PUT", Collection("v1beta1") + "/alpha", read);
  CHECK(changed.status == 422);
  CHECK(changed.body.value("message", "").find("spec.nodeMetricsImage: Required value") !=
        std::string::npos);
}

TEST_CASE("both samples go in through either version and come out through both",
          "[operator][crd][apiserver]") {
  Server s;
  const int port = s.server.port();
  auto got = Call(port, "GET",
                  "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/deviceconfigs.k8s.aws");
  REQUIRE(got.status == 200);
  bool established = false;
  for (const json& c : got.body["status"].value("conditions", json::array())) {
    if (c.value("type", "") == "Established") established = c.value("status", "") == "True";
  }
  CHECK(established);

  int created = 0;
  for (const char* sample : {"deviceconfig-v1alpha1.yaml", "deviceconfig-v1beta1.yaml"}) {
    for (const char* via : {"v1alpha1", "v1beta1"}) {
      json obj = LoadOne(std::string("deploy/operator/samples/") + sample);
      const json spec = obj["spec"];
      const std::string name = "neuron-" + std::to_string(created++);
      obj["metadata"]["name"] = name;
      obj["apiVersion"] = std::string(kGroup) + "/" + via;
      CAPTURE(sample, via);
      auto post = Call(port, "POST", Collection(via), obj);
      CAPTURE(post.body.dump());
      // The v1beta1 sample leaves customSchedulerImage to the operator, which v1alpha1's schema
      // requires: the API server refuses it written through v1alpha1.
      if (std::string(via) == "v1alpha1" && !spec.contains("customSchedulerImage")) {
        CHECK(post.status == 422);
        CHECK(post.body.value("message", "").find("spec.customSchedulerImage: Required value") !=
              std::string::npos);
        continue;
      }
      REQUIRE(post.status == 201);
      CHECK_FALSE(post.body["metadata"].value("uid", "").empty());
      for (const char* read : {"v1alpha1", "v1beta1"}) {
        CAPTURE(read);
        auto back = Call(port, "GET", Collection(read) + "/" + name);
        REQUIRE(back.status == 200);
        CHECK(back.body["apiVersion"] == std::string(kGroup) + "/" + read);
        CHECK(back.body["kind"] == kKind);
        CHECK(back.body["spec"] == spec);
        auto dc = ParseDeviceConfig(back.body);
        REQUIRE(dc.ok());
        CHECK(dc->name == name);
        CHECK(dc->uid == post.body["metadata"]["uid"]);
        CHECK(dc->generation == 1);
        // Whatever version it was written or is read at, the operator's rules agree.
        CHECK(ValidateDeviceConfig(*dc).empty());
      }
    }
  }
  for (const char* v : {"v1alpha1", "v1beta1"}) {
    auto list = Call(port, "GET", Collection(v));
    REQUIRE(list.status == 200);
    CHECK(list.body["kind"] == "DeviceConfigList");
    CHECK(list.body["items"].size() == 3);  // one of the four writes was refused
  }

  // The status subresource takes the summary strings the printer columns read.
  const std::string item = Collection("v1beta1") + "/neuron-0";
  json obj = Call(port, "GET", item).body;
  obj["status"] = {{"observedGeneration", 1},
                   {"driverSummary", "3/4"},
                   {"devicePluginSummary", "2/4"},
                   {"schedulerSummary", "2/2"},
                   {"driver", {{"desiredNumber", 4}, {"availableNumber", 3}}}};
  REQUIRE(Call(port, "PUT", item + "/status", obj).status == 200);
  auto after = Call(port, "GET", Collection("v1alpha1") + "/neuron-0");
  CHECK(after.body["status"]["driverSummary"] == "3/4");
  CHECK(after.body["status"]["driver"]["availableNumber"] == 3);
}

TEST_CASE("status.ultraServers: the schema names every field the operator writes",
          "[operator][crd]") {
  json crd = Crd();
  const json node = {{"metadata",
                      {{"name", "us-0"},
                       {"labels",
                        {{"neuron.amazonaws.com/ultraserver-mode", "1_2_4"},
                         {"neuron.amazonaws.com/ultraserver-server-id-4", "aaaa"},
                         {"neuron.amazonaws.com/ultraserver-node-id-4", "0"}}}}}};
  const json written = UltraServersStatus({&node});
  REQUIRE(written.is_object());
  for (const char* version : {"v1alpha1", "v1beta1"}) {
    CAPTURE(version);
    json& p = Version(
        crd,
        version)["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]["ultraServers"];
    CHECK(p["type"] == "object");
    for (const auto& [key, value] : written.items()) {
      CAPTURE(key);
      CHECK(p["properties"].contains(key));
    }
    const json& server = p["properties"]["servers"]["items"]["properties"];
    for (const auto& [key, value] : written.at("servers").at(0).items()) {
      CAPTURE(key);
      CHECK(server.contains(key));
    }
  }
}

TEST_CASE("discovery lists deviceconfigs with their short names in both versions",
          "[operator][crd][apiserver]") {
  Server s;
  const int port = s.server.port();
  auto group = Call(port, "GET", "/apis/k8s.aws");
  REQUIRE(group.status == 200);
  std::set<std::string> versions;
  for (const json& v : group.body.value("versions", json::array())) {
    versions.insert(v.value("version", ""));
  }
  CHECK(versions == std::set<std::string>{"v1alpha1", "v1beta1"});
  for (const char* v : {"v1alpha1", "v1beta1"}) {
    auto list = Call(port, "GET", std::string("/apis/k8s.aws/") + v);
    REQUIRE(list.status == 200);
    bool found = false;
    bool status = false;
    for (const json& r : list.body["resources"]) {
      const std::string name = r.value("name", "");
      if (name == "deviceconfigs") {
        found = true;
        CHECK(r.value("shortNames", json()) == json{"awslabsdc", "dc"});
        CHECK(r.value("kind", "") == kKind);
        CHECK(r.value("singularName", "") == "deviceconfig");
        CHECK(r.value("namespaced", false));
      }
      if (name == "deviceconfigs/status") status = true;
    }
    CAPTURE(v);
    CHECK(found);
    CHECK(status);
  }
}

}  // namespace
}  // namespace neuron::op
