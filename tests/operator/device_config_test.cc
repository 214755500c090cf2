// File: tests/operator/device_config_test.cc
// DeviceConfig parsing and validation: both sample files, every rule both ways, wrong types.
#include "lib/operator/device_config.h"

#include "tests/operator/operator_test_util.h"

namespace neuron::op {
namespace {

using nlohmann::json;
using testutil::LoadYaml;

json Sample() { return LoadYaml("deploy/operator/samples/deviceconfig-v1beta1.yaml").front(); }

std::vector<FieldError> ErrorsOf(const json& obj) {
  auto dc = ParseDeviceConfig(obj);
  REQUIRE(dc.ok());
  return ValidateDeviceConfig(*dc);
}

bool Names(const std::vector<FieldError>& errors, const std::string& field) {
  for (const FieldError& e : errors) {
    if (e.field == field) return true;
  }
  return false;
}

TEST_CASE("both sample DeviceConfigs parse and are valid", "[operator][spec]") {
  for (const char* f : {"deploy/operator/samples/deviceconfig-v1beta1.yaml",
                        "deploy/operator/samples/deviceconfig-v1alpha1.yaml"}) {
    const json obj = LoadYaml(f).front();
    auto dc = ParseDeviceConfig(obj);
    REQUIRE(dc.ok());
    CHECK(dc->name == "neuron");
    CHECK(dc->ns == "aws-neuron-operator");
    CHECK(dc->spec.driver_mode == DriverMode::kKmm);
    CHECK(dc->spec.selector.at("feature.node.kubernetes.io/aws-neuron") == "true");
    CHECK_FALSE(dc->spec.drivers_image.empty());
    CHECK(ValidateDeviceConfig(*dc).empty());
  }
}

TEST_CASE("the CEL rules of v1beta1 hold", "[operator][spec]") {
  json dra = Sample();
  dra["spec"]["draDriverImage"] = "example.com/dra:1";
  CHECK(Names(ErrorsOf(dra), "spec.draDriverImage"));
  for (const char* f : {"devicePluginImage", "customSchedulerImage", "schedulerExtensionImage"}) {
    dra["spec"].erase(f);
  }
  CHECK(ErrorsOf(dra).empty());  // DRA alone is fine
  json partial = Sample();
  partial["spec"].erase("customSchedulerImage");
  CHECK(Names(ErrorsOf(partial), "spec.devicePluginImage"));
}

TEST_CASE("v1alpha1 requires the four images of the seed's README", "[operator][spec]") {
  json alpha = LoadYaml("deploy/operator/samples/deviceconfig-v1alpha1.yaml").front();
  alpha["spec"].erase("schedulerExtensionImage");
  alpha["spec"].erase("customSchedulerImage");
  alpha["spec"].erase("devicePluginImage");
  const auto errors = ErrorsOf(alpha);
  CHECK(Names(errors, "spec.customSchedulerImage"));
  CHECK(Names(errors, "spec.schedulerExtensionImage"));
  CHECK(Names(errors, "spec.devicePluginImage"));
}

TEST_CASE("driver modes: kmm needs the driver image, preinstalled does not", "[operator][spec]") {
  json kmm = Sample();
  kmm["spec"].erase("driversImage");
  CHECK(Names(ErrorsOf(kmm), "spec.driversImage"));
  kmm["spec"]["driverMode"] = "preinstalled";
  CHECK(ErrorsOf(kmm).empty());
  kmm["spec"]["driverMode"] = "sideways";
  const auto errors = ErrorsOf(kmm);
  REQUIRE(Names(errors, "spec.driverMode"));
  CHECK(JoinFieldErrors(errors).find("kmm or preinstalled") != std::string::npos);
}

TEST_CASE("selectors, images and versions are checked as Kubernetes would", "[operator][spec]") {
  json bad = Sample();
  bad["spec"]["selector"] = {{"Bad Key!", "x"}, {"ok.example.com/name", "bad value!"}};
  bad["spec"]["devicePluginImage"] = "has space:1";
  bad["spec"]["driverVersion"] = "2.28 beta";
  const auto errors = ErrorsOf(bad);
  CHECK(Names(errors, "spec.selector[Bad Key!]"));
  CHECK(Names(errors, "spec.selector[ok.example.com/name]"));
  CHECK(Names(errors, "spec.devicePluginImage"));
  CHECK(Names(errors, "spec.driverVersion"));
  json good = Sample();
  good["spec"]["selector"] = {{"node.kubernetes.io/instance-type", "trn1.32xlarge"}, {"plain", ""}};
  good["spec"]["driverVersion"] = "2.28.0.0";
  CHECK(ErrorsOf(good).empty());
}

TEST_CASE("wrong types are field errors, never exceptions", "[operator][spec]") {
  json bad = Sample();
  bad["spec"]["selector"] = {{"feature.node.kubernetes.io/aws-neuron", true}};
  bad["spec"]["driversImage"] = 7;
  bad["spec"]["useInTreeDrivers"] = "yes";
  bad["spec"]["imageRepoSecret"] = "secret";
  const auto errors = ErrorsOf(bad);
  CHECK(Names(errors, "spec.selector[feature.node.kubernetes.io/aws-neuron]"));
  CHECK(Names(errors, "spec.driversImage"));
  CHECK(Names(errors, "spec.useInTreeDrivers"));
  CHECK(Names(errors, "spec.imageRepoSecret"));
  json no_spec = Sample();
  no_spec["spec"] = json::array();
  CHECK(Names(ErrorsOf(no_spec), "spec"));
  CHECK_FALSE(ParseDeviceConfig(json::array()).ok());
  CHECK_FALSE(ParseDeviceConfig(json{{"metadata", {{"name", 3}}}}).ok());
  CHECK_FALSE(ParseDeviceConfig(json{{"spec", json::object()}}).ok());
}

TEST_CASE("metadata the reconciler acts on is read", "[operator][spec]") {
  json obj = Sample();
  obj["metadata"]["uid"] = "u-1";
  obj["metadata"]["generation"] = 4;
  obj["metadata"]["resourceVersion"] = "77";
  obj["metadata"]["creationTimestamp"] = "2026-11-25T01:02:03Z";
  obj["metadata"]["finalizers"] = {kFinalizer, "other.example.com/x"};
  obj["metadata"]["deletionTimestamp"] = "2026-11-25T02:00:00Z";
  auto dc = ParseDeviceConfig(obj);
  REQUIRE(dc.ok());
  CHECK(dc->uid == "u-1");
  CHECK(dc->generation == 4);
  CHECK(dc->resource_version == "77");
  CHECK(dc->deleting);
  CHECK(dc->HasFinalizer());
  CHECK(dc->creation_time == absl::FromUnixSeconds(1795568523));
}

TEST_CASE("selectors match node labels by equality", "[operator][spec]") {
  const std::map<std::string, std::string> sel = {{"a", "1"}, {"b", "2"}};
  CHECK(SelectorMatches(sel, json{{"a", "1"}, {"b", "2"}, {"c", "3"}}));
  CHECK_FALSE(SelectorMatches(sel, json{{"a", "1"}}));
  CHECK_FALSE(SelectorMatches(sel, json{{"a", "1"}, {"b", "3"}}));
  CHECK_FALSE(SelectorMatches(sel, json(nullptr)));
  CHECK(SelectorMatches({}, json(nullptr)));  // empty selector: every node
}

TEST_CASE("YAML input keeps quoted scalars as strings and types plain ones", "[operator][spec]") {
  auto docs = ParseYamlDocuments(
      "a: \"true\"\nb: true\nc: 8000\nd: \"8000\"\ne: ~\nf: 1.5\ng: text\n---\n---\nx: [1, '2']\n");
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 2);
  const json& d = (*docs)[0];
  CHECK(d["a"] == "true");
  CHECK(d["b"] == true);
  CHECK(d["c"] == 8000);
  CHECK(d["d"] == "8000");
  CHECK(d["e"].is_null());
  CHECK(d["f"] == 1.5);
  CHECK(d["g"] == "text");
  CHECK((*docs)[1]["x"] == json{1, "2"});
  CHECK_FALSE(ParseYamlDocuments("a: [unclosed\n").ok());
  CHECK_FALSE(ParseYamlDocuments(std::string(5000, '[')).ok());
  // Aliases that expand exponentially ("billion laughs") are refused, not expanded.
  std::string laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'k'; ++c) {
    laughs += std::string(1, c) + ": &" + c + " [*" + char(c - 1) + ", *" + char(c - 1) + ", *" +
              char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) +
              ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" +
              char(c - 1) + "]\n";
  }
  CHECK_FALSE(ParseYamlDocuments(laughs).ok());
  // A ',' where a document would start stalls yaml-cpp 0.7's parser (it once took all memory):
  // refused with the place named. Documents before a good separator still parse.
  for (const std::string bad : {",", "{},", "\"x\",", "'x' ,", "[a],", "a: 1\n---\n{} ,\n"}) {
    CAPTURE(bad);
    auto r = ParseYamlDocuments(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("invalid YAML at line") != std::string_view::npos);
  }
  auto two = ParseYamlDocuments("{a: 1}\n---\n[2]\n...\n---\nb: c, d\n");
  REQUIRE(two.ok());
  CHECK(*two == std::vector<json>{{{"a", 1}}, json{2}, {{"b", "c, d"}}});
}

}  // namespace
}  // namespace neuron::op
