// File: tests/operator/device_config_rules_test.cc
// Every rule of ValidateDeviceConfig both ways, per API version and driver mode, the name
// syntaxes it relies on, and input of every wrong shape (device_config_test.cc has the
// sample-based cases and YAML input).
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "catch2/catch.hpp"
#include "lib/operator/device_config.h"
#include "lib/operator/device_config_syntax.h"
#include "lib/operator/yaml_input.h"
#include "tests/operator/device_config_test_util.h"

namespace neuron::op {
namespace {

using nlohmann::json;
using spectest::Alpha;
using spectest::Beta;
using spectest::Errors;
using spectest::Has;
using spectest::LoadSample;

// A valid v1beta1 DRA spec: no plugin, scheduler or extender.
json Dra() {
  json obj = Beta();
  for (const char* f : {"devicePluginImage", "customSchedulerImage", "schedulerExtensionImage"}) {
    obj["spec"].erase(f);
  }
  obj["spec"]["draDriverImage"] = "public.ecr.aws/neuron/neuron-dra-driver:1.0.1";
  return obj;
}

std::vector<std::string> Fields(const json& obj) {
  std::vector<std::string> out;
  for (const FieldError& e : Errors(obj)) out.push_back(e.field);
  return out;
}

using Strings = std::vector<std::string>;

TEST_CASE("the samples read as the seed's sample and are valid", "[operator][spec]") {
  // v1beta1 leaves customSchedulerImage to the operator (the API server's version); v1alpha1
  // requires it and keeps the seed's.
  CHECK(ParseDeviceConfig(Beta())->spec.custom_scheduler_image.empty());
  CHECK(ParseDeviceConfig(Alpha())->spec.custom_scheduler_image ==
        "public.ecr.aws/eks-distro/kubernetes/kube-scheduler:v1.35.5-eks-1-35-10");
  for (const json& obj : {Beta(), Alpha()}) {
    auto dc = ParseDeviceConfig(obj);
    REQUIRE(dc.ok());
    CHECK(dc->name == "neuron");
    CHECK(dc->ns == "aws-neuron-operator");
    const DeviceConfigSpec& s = dc->spec;
    CHECK(s.driver_mode == DriverMode::kKmm);
    CHECK(s.drivers_image ==
          "public.ecr.aws/os-partners/neuron-openshift/neuron-kernel-module:2.28.0.0");
    CHECK(s.device_plugin_image == "public.ecr.aws/neuron/neuron-device-plugin:2.30.0.0");
    CHECK(s.scheduler_extension_image == "public.ecr.aws/neuron/neuron-scheduler:2.30.0.0");
    CHECK(s.node_metrics_image == "public.ecr.aws/neuron/neuron-monitor:1.10.0");
    CHECK(s.driver_version.empty());
    CHECK(s.dra_driver_image.empty());
    CHECK(s.image_repo_secret.empty());
    CHECK_FALSE(s.use_in_tree_drivers);
    CHECK(s.selector ==
          std::map<std::string, std::string>{{"feature.node.kubernetes.io/aws-neuron", "true"}});
    CHECK(dc->parse_problems.empty());
    CHECK(ValidateDeviceConfig(*dc).empty());
  }
  CHECK(ParseDeviceConfig(Beta())->api_version == "k8s.aws/v1beta1");
  CHECK(ParseDeviceConfig(Alpha())->api_version == "k8s.aws/v1alpha1");
}

TEST_CASE("the rules do not depend on the version the object is read at", "[operator][spec]") {
  // The apiserver relabels apiVersion to the version asked for: the seed's v1alpha1 sample
  // (no nodeMetricsImage) reaches a v1beta1 reader as v1beta1 and must stay valid.
  json alpha = Alpha();
  alpha["spec"].erase("nodeMetricsImage");
  CHECK(Errors(alpha).empty());
  alpha["apiVersion"] = "k8s.aws/v1beta1";
  CHECK(Errors(alpha).empty());
  // What each version's schema alone requires was checked when the object was written.
  json beta = Beta();
  beta["spec"].erase("nodeMetricsImage");
  CHECK(Errors(beta).empty());
  for (const char* version : {"k8s.aws/v1alpha1", "k8s.aws/v1beta1"}) {
    CAPTURE(version);
    json obj = Alpha();
    obj["apiVersion"] = version;
    obj["spec"].erase("devicePluginImage");
    CHECK(Has(Errors(obj), "spec.devicePluginImage", "is required"));
    obj = Alpha();
    obj["apiVersion"] = version;
    obj["spec"]["driversImage"] = "";  // "" is as good as absent
    CHECK(Fields(obj) == Strings{"spec.driversImage"});
    obj["spec"]["driverMode"] = "preinstalled";
    CHECK(Errors(obj).empty());
  }
}

TEST_CASE("without apiVersion the object is read as v1beta1; other versions are refused",
          "[operator][spec]") {
  json obj = Beta();
  obj.erase("apiVersion");
  CHECK(Errors(obj).empty());
  obj["apiVersion"] = "k8s.aws/v2";
  CHECK(Fields(obj) == Strings{"apiVersion"});
  obj["apiVersion"] = 7;  // unreadable: treated as absent
  CHECK(Errors(obj).empty());
}

TEST_CASE("driver modes", "[operator][spec]") {
  SECTION("kmm needs driversImage, ending in a tag") {
    json obj = Beta();
    obj["spec"].erase("driversImage");
    CHECK(Fields(obj) == Strings{"spec.driversImage"});
    for (const char* bad : {"example.com/neuron-kmod", "example.com:5000/neuron-kmod",
                            "example.com/neuron-kmod@sha256:0123abcd", "example.com/kmod:"}) {
      obj["spec"]["driversImage"] = bad;
      CAPTURE(bad);
      CHECK(Fields(obj) == Strings{"spec.driversImage"});
    }
    for (const char* good : {"example.com:5000/neuron-kmod:2.28", "neuron-kmod:2.28.0.0"}) {
      obj["spec"]["driversImage"] = good;
      CAPTURE(good);
      CHECK(Errors(obj).empty());
    }
  }
  SECTION("kmm does not need driverVersion (the seed's sample has none)") {
    json obj = Beta();
    obj["spec"]["driverMode"] = "kmm";
    CHECK(Errors(obj).empty());
    obj["spec"]["driverVersion"] = "2.28.0.0";
    CHECK(Errors(obj).empty());
  }
  SECTION("preinstalled needs no driver image and ignores one without a tag") {
    json obj = Beta();
    obj["spec"]["driverMode"] = "preinstalled";
    obj["spec"].erase("driversImage");
    auto dc = ParseDeviceConfig(obj);
    REQUIRE(dc.ok());
    CHECK(dc->spec.driver_mode == DriverMode::kPreinstalled);
    CHECK(ValidateDeviceConfig(*dc).empty());
    obj["spec"]["driversImage"] = "example.com/untagged";
    CHECK(Errors(obj).empty());
  }
  SECTION("anything else is an error naming the choices") {
    for (const json& mode : {json("KMM"), json(""), json("preinstalled ")}) {
      json obj = Beta();
      obj["spec"]["driverMode"] = mode;
      const auto errors = Errors(obj);
      REQUIRE(errors.size() == 1);
      CHECK(errors[0].field == "spec.driverMode");
      CHECK(absl::StrContains(errors[0].message, "kmm or preinstalled"));
    }
  }
}

TEST_CASE("device plugin, scheduler and DRA: the CEL rules and what must advertise devices",
          "[operator][spec]") {
  const char* trio[] = {"devicePluginImage", "customSchedulerImage", "schedulerExtensionImage"};
  CHECK(Errors(Dra()).empty());
  for (const char* f : trio) {  // DRA plus any one of the three
    json obj = Dra();
    obj["spec"][f] = "example.com/x:1";
    CAPTURE(f);
    CHECK(Has(Errors(obj), "spec.draDriverImage", "cannot be set together"));
  }
  for (int mask = 1; mask < 7; ++mask) {  // some but not all of the three, no DRA
    json obj = Beta();
    obj["spec"]["customSchedulerImage"] = "registry.k8s.io/kube-scheduler:v1.32.3";
    for (int i = 0; i < 3; ++i) {
      if ((mask & (1 << i)) == 0) obj["spec"][trio[i]] = "";
    }
    CAPTURE(mask);
    const auto errors = Errors(obj);
    // Only customSchedulerImage may be left out: the operator then picks the cluster's version.
    const bool scheduler_only_missing = mask == 0b101;
    CHECK(Has(errors, "spec.devicePluginImage", "set together or not at all") ==
          !scheduler_only_missing);
    CHECK(errors.empty() == scheduler_only_missing);
    CHECK_FALSE(Has(errors, "spec.draDriverImage"));
  }
  // Neither DRA nor the three: nothing would advertise the devices.
  json none = Dra();
  none["spec"].erase("draDriverImage");
  CHECK(Fields(none) == Strings{"spec.devicePluginImage"});
  // DRA set to "" is unset, as in the CRD's rules.
  json empty_dra = Beta();
  empty_dra["spec"]["draDriverImage"] = "";
  CHECK(Errors(empty_dra).empty());
  CHECK_FALSE(ParseDeviceConfig(empty_dra)->DraMode());
  CHECK(ParseDeviceConfig(Dra())->DraMode());
}

TEST_CASE("every image field refuses whitespace and control characters", "[operator][spec]") {
  for (const char* f : {"driversImage", "devicePluginImage", "customSchedulerImage",
                        "schedulerExtensionImage", "nodeMetricsImage", "nodeAgentImage"}) {
    for (const std::string& bad :
         {std::string("example.com/x:1 "), std::string("a b:1"), std::string("x:1\n"),
          std::string("x:\t1"), std::string("x:1\x01"), std::string(" ")}) {
      json obj = Beta();
      obj["spec"][f] = bad;
      CAPTURE(f, bad);
      CHECK(Fields(obj) == Strings{std::string("spec.") + f});
    }
  }
  json obj = Dra();
  obj["spec"]["draDriverImage"] = "dra driver:1";
  CHECK(Fields(obj) == Strings{"spec.draDriverImage"});
}

TEST_CASE("driverVersion is a label value", "[operator][spec]") {
  for (const std::string& good :
       {std::string(""), std::string("2.28.0.0"), std::string("v2_28"), std::string(63, '7')}) {
    json obj = Beta();
    obj["spec"]["driverVersion"] = good;
    CAPTURE(good);
    CHECK(Errors(obj).empty());
  }
  for (const std::string& bad :
       {std::string("2.28 beta"), std::string(64, '7'), std::string("-2.28"), std::string("2.28."),
        std::string("2.28/0")}) {
    json obj = Beta();
    obj["spec"]["driverVersion"] = bad;
    CAPTURE(bad);
    CHECK(Fields(obj) == Strings{"spec.driverVersion"});
  }
}

TEST_CASE("selector keys and values follow Kubernetes label syntax", "[operator][spec]") {
  const std::string p253 = std::string(63, 'a') + "." + std::string(63, 'b') + "." +
                           std::string(63, 'c') + "." + std::string(61, 'd');
  REQUIRE(p253.size() == 253);
  for (const std::string& key :
       {std::string("plain"), std::string("a_b.c-D9"), std::string("k8s.aws/x"),
        std::string("node.kubernetes.io/instance-type"), p253 + "/x", std::string(63, 'k'),
        std::string("x/") + std::string(63, 'k'), std::string("1-2.example/A")}) {
    json obj = Beta();
    obj["spec"]["selector"] = {{key, "v"}};
    CAPTURE(key);
    CHECK(Errors(obj).empty());
  }
  for (const std::string& key :
       {std::string(""), std::string("_a"), std::string("a-"), std::string("Bad Key!"),
        std::string("/x"), std::string("x/"), std::string("a/b/c"), std::string("Example.com/x"),
        std::string("-a.com/x"), std::string("a..b/x"), p253 + "e/x", std::string(64, 'k'),
        std::string("x/") + std::string(64, 'k'), std::string("caf\xc3\xa9")}) {
    json obj = Beta();
    obj["spec"]["selector"] = {{key, "v"}};
    CAPTURE(key);
    // Past 80 characters the key is cut short in the field path ("..." marks the cut).
    const std::string shown = key.size() <= 80 ? key : key.substr(0, 80) + "...";
    CHECK(Fields(obj) == Strings{"spec.selector[" + shown + "]"});
  }
  for (const std::string& value :
       {std::string(""), std::string("true"), std::string(63, 'v'), std::string("A.b_c-9")}) {
    json obj = Beta();
    obj["spec"]["selector"] = {{"k", value}};
    CAPTURE(value);
    CHECK(Errors(obj).empty());
  }
  for (const std::string& value : {std::string(64, 'v'), std::string("a b"), std::string("-a"),
                                   std::string("a."), std::string("a/b")}) {
    json obj = Beta();
    obj["spec"]["selector"] = {{"k", value}};
    CAPTURE(value);
    const auto errors = Errors(obj);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].field == "spec.selector[k]");
    CHECK(absl::StrContains(errors[0].message, "label value"));
  }
}

TEST_CASE("imageRepoSecret: a Secret name, or nothing", "[operator][spec]") {
  json obj = Beta();
  obj["spec"]["imageRepoSecret"] = {{"name", "ecr-secret"}};
  auto dc = ParseDeviceConfig(obj);
  REQUIRE(dc.ok());
  CHECK(dc->spec.image_repo_secret == "ecr-secret");
  CHECK(ValidateDeviceConfig(*dc).empty());
  for (const json& none : {json::object(), json{{"name", ""}}, json(nullptr)}) {
    obj["spec"]["imageRepoSecret"] = none;
    CAPTURE(none.dump());
    CHECK(ParseDeviceConfig(obj)->spec.image_repo_secret.empty());
    CHECK(Errors(obj).empty());
  }
  obj["spec"]["imageRepoSecret"] = {{"name", "Not_A_Secret"}};
  CHECK(Fields(obj) == Strings{"spec.imageRepoSecret.name"});
  obj["spec"]["imageRepoSecret"] = {{"name", 5}};
  CHECK(Fields(obj) == Strings{"spec.imageRepoSecret.name"});
  obj["spec"]["imageRepoSecret"] = "ecr-secret";
  CHECK(Fields(obj) == Strings{"spec.imageRepoSecret"});
}

TEST_CASE("metadata.name must fit the names of the children", "[operator][spec]") {
  for (const std::string& good : {std::string("neuron"), std::string("a"),
                                  std::string("trn2-pool-1"), std::string(kMaxNameLength, 'n')}) {
    json obj = Beta();
    obj["metadata"]["name"] = good;
    CAPTURE(good);
    CHECK(Errors(obj).empty());
  }
  for (const std::string& bad :
       {std::string(kMaxNameLength + 1, 'n'), std::string("Neuron"), std::string("neuron.prod"),
        std::string("1neuron"), std::string("neuron-"), std::string("neu_ron")}) {
    json obj = Beta();
    obj["metadata"]["name"] = bad;
    CAPTURE(bad);
    CHECK(Fields(obj) == Strings{"metadata.name"});
  }
  // <namespace>.<name> is a label value on every child.
  json obj = Beta();
  obj["metadata"]["namespace"] = std::string(63 - 1 - 6, 's');
  CHECK(Errors(obj).empty());
  obj["metadata"]["namespace"] = std::string(63 - 6, 's');
  CHECK(Fields(obj) == Strings{"metadata.name"});
}

TEST_CASE("wrong JSON types are field errors, never exceptions", "[operator][spec]") {
  const json wrong[] = {json(3), json(true), json::array({"x"}), json{{"a", "b"}}, json(1.5)};
  for (const char* f : {"driversImage", "driverVersion", "devicePluginImage",
                        "customSchedulerImage", "schedulerExtensionImage", "draDriverImage",
                        "nodeMetricsImage", "nodeAgentImage", "driverMode"}) {
    for (const json& w : wrong) {
      json obj = Beta();
      obj["spec"][f] = w;
      CAPTURE(f, w.dump());
      CHECK(Has(Errors(obj), std::string("spec.") + f, "must be a string"));
    }
  }
  for (const json& w : {json("true"), json(1), json::array()}) {
    json obj = Beta();
    obj["spec"]["useInTreeDrivers"] = w;
    CHECK(Fields(obj) == Strings{"spec.useInTreeDrivers"});
  }
  for (const json& w : {json("a=b"), json::array({"a"}), json(1)}) {
    json obj = Beta();
    obj["spec"]["selector"] = w;
    CHECK(Fields(obj) == Strings{"spec.selector"});
  }
  json obj = Beta();
  obj["spec"]["selector"] = {{"a", 1}, {"b", nullptr}, {"c", "ok"}, {"d", {{"x", 1}}}};
  auto dc = ParseDeviceConfig(obj);
  REQUIRE(dc.ok());
  CHECK(dc->spec.selector == std::map<std::string, std::string>{{"c", "ok"}});
  CHECK(Fields(obj) == Strings{"spec.selector[a]", "spec.selector[b]", "spec.selector[d]"});
  // Null means unset, as the API server treats it.
  json nulls = Beta();
  nulls["spec"]["useInTreeDrivers"] = nullptr;
  nulls["spec"]["selector"] = nullptr;
  nulls["spec"]["driverMode"] = nullptr;
  CHECK(Errors(nulls).empty());
}

TEST_CASE("structurally unusable objects fail to parse; odd ones parse", "[operator][spec]") {
  for (const json& bad :
       {json(nullptr), json("DeviceConfig"), json::array({Beta()}), json::object(),
        json{{"metadata", json::array()}}, json{{"metadata", {{"name", ""}}}},
        json{{"metadata", {{"name", 3}}}}, json{{"metadata", {{"name", nullptr}}}}}) {
    CAPTURE(bad.dump());
    auto dc = ParseDeviceConfig(bad);
    REQUIRE_FALSE(dc.ok());
    CHECK(dc.status().code() == absl::StatusCode::kInvalidArgument);
  }
  // No spec (or null): every required image is missing, nothing else.
  const json bare = {{"metadata", {{"name", "n"}}}};
  CHECK(Fields(bare) == Strings{"spec.driversImage", "spec.devicePluginImage"});
  json null_spec = bare;
  null_spec["spec"] = nullptr;
  CHECK(Fields(null_spec) == Fields(bare));
  json list_spec = bare;
  list_spec["spec"] = json::array();
  CHECK(Fields(list_spec).front() == "spec");
}

TEST_CASE("metadata the reconciler acts on, and what it ignores", "[operator][spec]") {
  json obj = Beta();
  obj["metadata"]["uid"] = "u-1";
  obj["metadata"]["generation"] = 9;
  obj["metadata"]["resourceVersion"] = "41";
  obj["metadata"]["creationTimestamp"] = "2026-11-25T01:02:03.5+01:00";
  obj["metadata"]["finalizers"] = {"other.example.com/x", 3, kFinalizer};
  auto dc = ParseDeviceConfig(obj);
  REQUIRE(dc.ok());
  CHECK(dc->uid == "u-1");
  CHECK(dc->generation == 9);
  CHECK(dc->resource_version == "41");
  CHECK(dc->creation_time == absl::FromUnixSeconds(1795568523 - 3600) + absl::Milliseconds(500));
  CHECK(dc->finalizers == Strings{"other.example.com/x", kFinalizer});
  CHECK(dc->HasFinalizer());
  CHECK_FALSE(dc->deleting);

  obj["metadata"]["deletionTimestamp"] = nullptr;
  CHECK_FALSE(ParseDeviceConfig(obj)->deleting);
  obj["metadata"]["deletionTimestamp"] = "2026-11-25T02:00:00Z";
  CHECK(ParseDeviceConfig(obj)->deleting);

  // The server writes these; wrong types read as unset rather than failing the object.
  json odd = Beta();
  odd["metadata"]["generation"] = "9";
  odd["metadata"]["uid"] = 1;
  odd["metadata"]["creationTimestamp"] = "yesterday";
  odd["metadata"]["finalizers"] = kFinalizer;
  dc = ParseDeviceConfig(odd);
  REQUIRE(dc.ok());
  CHECK(dc->generation == 0);
  CHECK(dc->uid.empty());
  CHECK(dc->creation_time == absl::Time());
  CHECK_FALSE(dc->HasFinalizer());
  CHECK(ValidateDeviceConfig(*dc).empty());
}

TEST_CASE("JoinFieldErrors and SelectorMatches", "[operator][spec]") {
  CHECK(JoinFieldErrors({}).empty());
  CHECK(JoinFieldErrors({{"spec.a", "is required"}, {"spec.b", "bad"}}) ==
        "spec.a: is required; spec.b: bad");

  const std::map<std::string, std::string> sel = {{"a", "1"}, {"k8s.aws/b", ""}};
  CHECK(SelectorMatches(sel, json{{"a", "1"}, {"k8s.aws/b", ""}, {"c", "x"}}));
  CHECK_FALSE(SelectorMatches(sel, json{{"a", "1"}}));
  CHECK_FALSE(SelectorMatches(sel, json{{"a", 1}, {"k8s.aws/b", ""}}));
  CHECK_FALSE(SelectorMatches(sel, json::array({"a", "1"})));
  CHECK_FALSE(SelectorMatches(sel, json("a=1")));
  CHECK(SelectorMatches({}, json::array()));
  CHECK(SelectorMatches({}, json{{"any", "thing"}}));
}

TEST_CASE("name syntaxes match apimachinery's", "[operator][spec]") {
  CHECK(IsDns1123Subdomain("a"));
  CHECK(IsDns1123Subdomain("a-b.c9"));
  CHECK_FALSE(IsDns1123Subdomain(""));
  CHECK_FALSE(IsDns1123Subdomain("a."));
  CHECK_FALSE(IsDns1123Subdomain(".a"));
  CHECK_FALSE(IsDns1123Subdomain("A"));
  CHECK_FALSE(IsDns1123Subdomain("a_b"));
  CHECK_FALSE(IsDns1123Subdomain(std::string(254, 'a')));
  CHECK(IsDns1035Label("a1-b"));
  CHECK_FALSE(IsDns1035Label("1a"));
  CHECK_FALSE(IsDns1035Label("a.b"));
  CHECK_FALSE(IsDns1035Label(std::string(64, 'a')));
  CHECK(IsLabelValue(""));
  CHECK_FALSE(IsLabelKey(""));
  CHECK(HasImageTag("registry:5000/repo:tag"));
  CHECK_FALSE(HasImageTag("registry:5000/repo"));
  CHECK_FALSE(HasImageTag("repo:tag@sha256:00"));
  CHECK(IsImageReference("r/x:1"));
  CHECK_FALSE(IsImageReference(""));
  CHECK_FALSE(IsImageReference(std::string("x\0y", 3)));
  CHECK_FALSE(IsImageReference("x\x7f"));
}

TEST_CASE("large and deep input is refused, not crashed on", "[operator][spec]") {
  json obj = Beta();
  const std::string huge(1 << 20, 'k');
  obj["spec"]["selector"] = {{huge, huge}};
  obj["spec"]["nodeAgentImage"] = huge;  // long but well-formed: accepted
  // Moved in, not copied: nlohmann copies recursively, and this test's code is unoptimised.
  const auto deep = [] {
    json nested = "x";
    for (int i = 0; i < 5000; ++i) nested = json::array({std::move(nested)});
    return nested;
  };
  obj["spec"]["driverVersion"] = deep();
  obj["spec"]["extra"] = deep();  // unknown fields are ignored (the API server prunes them)
  // Quoted keys are cut short: the errors end up in a condition message.
  CHECK(Fields(obj) ==
        Strings{"spec.driverVersion", "spec.selector[" + huge.substr(0, 80) + "...]"});

  // Cut on a character boundary: "é" is two bytes, the 80th byte would split one.
  json utf8 = Beta();
  std::string accents = "x";
  for (int i = 0; i < 60; ++i) accents += "\xc3\xa9";
  utf8["spec"]["selector"] = {{accents, "v"}};
  const std::string shown = Fields(utf8).front();
  CHECK(shown == "spec.selector[" + accents.substr(0, 79) + "...]");
  CHECK(json(shown).dump().size() > 0);  // valid UTF-8, or dump() would throw

  // Thousands of bad keys make a message of a few KiB that counts the rest.
  json many = Beta();
  for (int i = 0; i < 5000; ++i) many["spec"]["selector"]["bad key " + std::to_string(i)] = "v";
  const auto errors = Errors(many);
  CHECK(errors.size() == 5000);
  const std::string joined = JoinFieldErrors(errors);
  CHECK(joined.size() <= 4096 + 32);
  CHECK(absl::StrContains(joined, " more"));
  CHECK(absl::StartsWith(joined, "spec.selector[bad key 0]: is not a valid label key; "));
}

}  // namespace
}  // namespace neuron::op
