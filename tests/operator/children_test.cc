// File: tests/operator/children_test.cc
// The desired children of a DeviceConfig: golden YAML for the seed's sample (both API
// versions), DRA mode, preinstalled mode and OpenShift with monitoring; and properties every
// child set must have (owners, selectors that match, accounts that exist, the scheduler
// configuration pointing at the extender's Service, every Neuron PCI id in the NFD rule).
// UPDATE_GOLDEN=1 rewrites the golden files.
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "lib/operator/children.h"
#include "lib/operator/render.h"
#include "lib/topology/device_model.h"
#include "tests/operator/operator_test_util.h"

namespace neuron::op {
namespace {

using nlohmann::json;
using testutil::LoadYaml;
using testutil::SourcePath;

DeviceConfig FromSample(const char* file) {
  json obj = LoadYaml(file).front();
  obj["metadata"]["uid"] = "0b8c5a52-7f4e-4a56-9c1e-000000000001";  // set by the server
  auto dc = ParseDeviceConfig(obj);
  REQUIRE(dc.ok());
  REQUIRE(ValidateDeviceConfig(*dc).empty());
  return *dc;
}

DeviceConfig Sample() { return FromSample("deploy/operator/samples/deviceconfig-v1beta1.yaml"); }

void CheckGolden(const std::string& name, const std::vector<Child>& children) {
  const std::string path = SourcePath("tests/operator/golden/" + name + ".yaml");
  const std::string text = RenderYaml(children);
  if (std::getenv("UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << text;
    WARN("rewrote " << path);
    return;
  }
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream want;
  want << in.rdbuf();
  CAPTURE(path);
  CHECK(text == want.str());
}

struct Variant {
  const char* golden;
  DeviceConfig dc;
  ClusterApis apis;
};

std::vector<Variant> Variants() {
  std::vector<Variant> v;
  v.push_back({"sample-v1beta1", Sample(), {}});
  v.push_back({"sample-v1alpha1",
               FromSample("deploy/operator/samples/deviceconfig-v1alpha1.yaml"), {}});
  DeviceConfig dra = Sample();
  dra.spec.dra_driver_image = "public.ecr.aws/neuron/neuron-dra-driver:1.0.0";
  dra.spec.device_plugin_image.clear();
  dra.spec.custom_scheduler_image.clear();
  dra.spec.scheduler_extension_image.clear();
  ClusterApis dra_apis;
  dra_apis.dra = true;
  v.push_back({"dra", dra, dra_apis});
  DeviceConfig pre = Sample();
  pre.spec.driver_mode = DriverMode::kPreinstalled;
  pre.spec.selector.clear();
  pre.spec.image_repo_secret = "ecr-pull";
  v.push_back({"preinstalled", pre, {}});
  ClusterApis openshift;
  openshift.nfd_group = "nfd.openshift.io";
  openshift.service_monitor = true;
  v.push_back({"openshift-monitoring", Sample(), openshift});
  return v;
}

TEST_CASE("children match the golden objects", "[operator][children]") {
  for (const Variant& v : Variants()) {
    OperatorSettings s;
    CheckGolden(v.golden, DesiredChildren(v.dc, v.apis, s));
  }
}

TEST_CASE("rendered YAML reads back as the same objects", "[operator][children]") {
  for (const Variant& v : Variants()) {
    const std::vector<Child> children = DesiredChildren(v.dc, v.apis, {});
    auto docs = ParseYamlDocuments(RenderYaml(children));
    REQUIRE(docs.ok());
    REQUIRE(docs->size() == children.size());
    for (size_t i = 0; i < children.size(); ++i) {
      CAPTURE(v.golden, i);
      CHECK((*docs)[i] == children[i].object);
    }
  }
}

TEST_CASE("every child set holds together", "[operator][children]") {
  for (const Variant& v : Variants()) {
    const std::vector<Child> children = DesiredChildren(v.dc, v.apis, {});
    std::set<std::string> accounts, names;
    for (const Child& c : children) {
      if (c.object["kind"] == "ServiceAccount") accounts.insert(c.object["metadata"]["name"]);
    }
    for (const Child& c : children) {
      const json& meta = c.object["metadata"];
      CAPTURE(v.golden, c.object["kind"], meta["name"]);
      CHECK(names.insert(c.ref.resource + "/" + meta["name"].get<std::string>()).second);
      CHECK(meta["labels"][kOwnerLabel] == OwnerLabelValue(v.dc));
      CHECK(meta["labels"][kComponentLabel] == ComponentName(c.component));
      CHECK(meta.contains("namespace") == c.ref.namespaced);
      if (c.ref.namespaced) {
        REQUIRE(meta["ownerReferences"].size() == 1);
        CHECK(meta["ownerReferences"][0]["uid"] == v.dc.uid);
        CHECK(meta["ownerReferences"][0]["controller"] == true);
        CHECK(meta["ownerReferences"][0]["apiVersion"] == v.dc.api_version);
      } else {
        CHECK_FALSE(meta.contains("ownerReferences"));  // a namespaced owner is invalid here
      }
      const std::string kind = c.object["kind"];
      if (kind == "DaemonSet" || kind == "Deployment") {
        const json& sel = c.object["spec"]["selector"]["matchLabels"];
        const json& pod_labels = c.object["spec"]["template"]["metadata"]["labels"];
        for (auto& [k, val] : sel.items()) CHECK(pod_labels.value(k, json()) == val);
        const json& pod = c.object["spec"]["template"]["spec"];
        CHECK(accounts.count(pod["serviceAccountName"].get<std::string>()) == 1);
        if (!v.dc.spec.image_repo_secret.empty()) {
          CHECK(pod["imagePullSecrets"][0]["name"] == v.dc.spec.image_repo_secret);
        }
        if (kind == "DaemonSet") {
          CHECK((pod.contains("nodeSelector") || pod.contains("affinity")));
        }
      }
      if (kind == "Module") {
        CHECK(accounts.count(c.object["spec"]["moduleLoader"]["serviceAccountName"]) == 1);
        // DRA replaces the device plugin: KMM only loads the driver then.
        REQUIRE(c.object["spec"].contains("devicePlugin") == !v.dc.DraMode());
        if (v.dc.DraMode()) continue;
        CHECK(accounts.count(c.object["spec"]["devicePlugin"]["serviceAccountName"]) == 1);
        // KMM mounts the kubelet's device-plugin directory itself; a second mount is invalid.
        for (const json& m : c.object["spec"]["devicePlugin"]["container"]["volumeMounts"]) {
          CHECK(m["mountPath"] != "/var/lib/kubelet/device-plugins");
        }
      }
    }
  }
}

TEST_CASE("the scheduler calls the extender's Service for every verb", "[operator][children]") {
  const std::vector<Child> children = DesiredChildren(Sample(), {}, {});
  json config, service, extender;
  for (const Child& c : children) {
    const std::string name = c.object["metadata"]["name"];
    if (c.object["kind"] == "ConfigMap") {
      auto docs = ParseYamlDocuments(c.object["data"]["scheduler-config.yaml"]);
      REQUIRE(docs.ok());
      config = docs->front();
    }
    if (c.object["kind"] == "Service" && name == "neuron-custom-scheduler-extension") {
      service = c.object;
    }
    if (c.object["kind"] == "Deployment" && name == "neuron-custom-scheduler-extension") {
      extender = c.object;
    }
  }
  REQUIRE(config.is_object());
  const json& e = config["extenders"][0];
  CHECK(e["urlPrefix"] == "http://neuron-custom-scheduler-extension.aws-neuron-operator.svc:12345");
  CHECK(service["spec"]["ports"][0]["port"] == 12345);
  for (const char* verb : {"filterVerb", "prioritizeVerb", "preemptVerb", "bindVerb"}) {
    CHECK(e.contains(verb));
  }
  CHECK(e["nodeCacheCapable"] == true);
  CHECK(e["managedResources"].size() == 2);
  for (auto& [k, val] : service["spec"]["selector"].items()) {
    CHECK(extender["spec"]["template"]["metadata"]["labels"][k] == val);
  }
  CHECK(extender["spec"]["template"]["spec"]["containers"][0]["args"][0] == "--listen=0.0.0.0:12345");
}

TEST_CASE("the NFD rule lists every Neuron PCI device id", "[operator][children]") {
  std::set<std::string> want;
  for (unsigned id = 0; id <= 0xffff; ++id) {
    if (topology::ModelForPciDevice(static_cast<uint16_t>(id))) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "%04x", id);
      want.insert(hex);
    }
  }
  CHECK(want.count("7564") == 1);  // Trainium3
  for (const char* group : {"nfd.k8s-sigs.io", "nfd.openshift.io"}) {
    ClusterApis apis;
    apis.nfd_group = group;
    int rules = 0;
    for (const Child& c : DesiredChildren(Sample(), apis, {})) {
      if (c.object["kind"] != "NodeFeatureRule") continue;
      ++rules;
      CHECK(c.object["apiVersion"] == std::string(group) + "/v1alpha1");
      const json& m = c.object["spec"]["rules"][0]["matchFeatures"][0]["matchExpressions"];
      std::set<std::string> got(m["device"]["value"].begin(), m["device"]["value"].end());
      CHECK(got == want);
      CHECK(m["vendor"]["value"] == json{"1d0f"});
    }
    CHECK(rules == 1);
  }
}

TEST_CASE("missing optional APIs leave their objects out", "[operator][children]") {
  ClusterApis none;
  none.kmm = false;
  none.nfd_group = "";
  for (const Child& c : DesiredChildren(Sample(), none, {})) {
    CHECK(c.object["kind"] != "Module");
    CHECK(c.object["kind"] != "NodeFeatureRule");
    CHECK(c.object["kind"] != "ServiceMonitor");
  }
  const std::vector<Component> order = DeletionOrder();
  CHECK(order.back() == Component::kDriver);  // the module goes last
}

}  // namespace
}  // namespace neuron::op
