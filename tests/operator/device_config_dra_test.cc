// File: tests/operator/device_config_dra_test.cc
// spec.allocation and spec.dra: how they read, and every contradiction with draDriverImage
// (AWS's driver) and the plugin/scheduler images refused with a message naming the field.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "catch2/catch.hpp"
#include "lib/operator/device_config.h"
#include "lib/operator/yaml_input.h"
#include "tests/operator/device_config_test_util.h"

namespace neuron::op {
namespace {

using nlohmann::json;
using spectest::Beta;
using spectest::Errors;
using spectest::Has;

// allocation `a` on the sample (devicePluginImage and schedulerExtensionImage set).
json With(const char* a) {
  json obj = Beta();
  obj["spec"]["allocation"] = a;
  return obj;
}

// Pure DRA as meant: our image, no extender or second scheduler.
json PureDra() {
  json obj = With("dra");
  obj["spec"].erase("schedulerExtensionImage");
  obj["spec"].erase("customSchedulerImage");
  return obj;
}

TEST_CASE("allocation and dra read into the spec", "[operator][spec][dra]") {
  auto dc = ParseDeviceConfig(Beta());
  REQUIRE(dc.ok());
  CHECK(dc->spec.allocation == Allocation::kDevicePlugin);
  CHECK_FALSE(dc->DraMode());
  CHECK(dc->RunsDevicePlugin());

  json obj = PureDra();
  obj["spec"]["dra"] = {{"partitionableDevices", true}, {"deviceTaints", true}};
  dc = ParseDeviceConfig(obj);
  REQUIRE(dc.ok());
  CHECK(dc->spec.allocation == Allocation::kDra);
  CHECK(dc->spec.dra.partitionable_devices);
  CHECK(dc->spec.dra.device_taints);
  CHECK_FALSE(dc->spec.dra.extended_resource);
  CHECK(dc->OurDra());
  CHECK_FALSE(dc->AwsDra());
  CHECK_FALSE(dc->RunsDevicePlugin());
  CHECK(Errors(obj).empty());

  dc = ParseDeviceConfig(With("mixed"));
  REQUIRE(dc.ok());
  CHECK(dc->OurDra());
  CHECK(dc->RunsDevicePlugin());  // on the nodes not labelled for DRA
  CHECK(Errors(With("mixed")).empty());
  CHECK(Errors(With("devicePlugin")).empty());
  CHECK(std::string(AllocationName(Allocation::kMixed)) == "mixed");
}

TEST_CASE("allocation and dra of the wrong shape are field errors", "[operator][spec][dra]") {
  CHECK(Has(Errors(With("both")), "spec.allocation", "use devicePlugin, dra or mixed"));
  json num = Beta();
  num["spec"]["allocation"] = 3;
  CHECK(Has(Errors(num), "spec.allocation", "must be a string"));
  json arr = With("mixed");
  arr["spec"]["dra"] = json::array();
  CHECK(Has(Errors(arr), "spec.dra", "must be an object"));
  json flag = With("mixed");
  flag["spec"]["dra"] = {{"deviceTaints", "yes"}};
  CHECK(Has(Errors(flag), "spec.dra.deviceTaints", "true or false"));
}

TEST_CASE("contradictory allocation specs are refused, each naming what to change",
          "[operator][spec][dra]") {
  // AWS's driver and ours: one or the other.
  json aws = Beta();
  for (const char* f : {"devicePluginImage", "schedulerExtensionImage"}) aws["spec"].erase(f);
  aws["spec"]["draDriverImage"] = "public.ecr.aws/neuron/neuron-dra-driver:1.0.1";
  CHECK(Errors(aws).empty());
  for (const char* a : {"devicePlugin", "dra", "mixed"}) {
    json both = aws;
    both["spec"]["allocation"] = a;
    CAPTURE(a);
    CHECK(Has(Errors(both), "spec.draDriverImage", "cannot be combined with allocation or dra"));
  }
  json aws_opts = aws;
  aws_opts["spec"]["dra"] = {{"deviceTaints", true}};
  CHECK(Has(Errors(aws_opts), "spec.draDriverImage", "cannot be combined"));

  // DRA options without a DRA allocation configure nothing.
  json opts = Beta();
  opts["spec"]["dra"] = {{"partitionableDevices", true}};
  CHECK(Has(Errors(opts), "spec.dra", "set allocation to dra or mixed"));
  opts["spec"]["allocation"] = "devicePlugin";
  CHECK(Has(Errors(opts), "spec.dra", "set allocation to dra or mixed"));

  // Our driver is devicePluginImage: required in dra and mixed.
  for (const char* a : {"dra", "mixed"}) {
    json none = a == std::string("dra") ? PureDra() : With(a);
    none["spec"].erase("devicePluginImage");
    CAPTURE(a);
    CHECK(Has(Errors(none), "spec.devicePluginImage", "runs it as the DRA driver"));
  }

  // Pure DRA has no extender or second scheduler; mixed keeps both for device-plugin nodes.
  CHECK(Has(Errors(With("dra")), "spec.schedulerExtensionImage", "use allocation mixed"));
  json custom = PureDra();
  custom["spec"]["customSchedulerImage"] = "registry.k8s.io/kube-scheduler:v1.34.1";
  CHECK(Has(Errors(custom), "spec.schedulerExtensionImage", "unset"));
  json mixed_no_ext = With("mixed");
  mixed_no_ext["spec"].erase("schedulerExtensionImage");
  CHECK(Has(Errors(mixed_no_ext), "spec.devicePluginImage", "set together"));
}

}  // namespace
}  // namespace neuron::op
