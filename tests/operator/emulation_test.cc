// File: tests/operator/emulation_test.cc
// spec.emulation: the sample reads and validates; the plugin, DRA driver and node agent run with
// --emulate and a writable tree, away from nodes with real Neuron devices; no KMM Module; the
// status says the stack is emulated; bad instance types and LNCs are field errors.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "lib/operator/children.h"
#include "lib/operator/status.h"
#include "tests/operator/children_test_util.h"

namespace neuron::op {
namespace {

using childtest::Find;
using childtest::HasArg;
using nlohmann::json;

constexpr char kSample[] = "deploy/operator/samples/deviceconfig-emulated.yaml";

const json& Container(const json* workload) {
  REQUIRE(workload != nullptr);
  return workload->at("spec").at("template").at("spec").at("containers").at(0);
}

// The emulated tree lives in an emptyDir mounted where --emulate-dir points.
void CheckEmulated(const json* workload, const std::string& type, const std::string& size_limit,
                   const std::string& memory_limit) {
  const json& c = Container(workload);
  CHECK(HasArg(c, "--emulate=" + type));
  std::string dir;
  for (const json& a : c["args"]) {
    const std::string s = a.get<std::string>();
    if (absl::StartsWith(s, "--emulate-dir=")) dir = s.substr(14);
  }
  REQUIRE_FALSE(dir.empty());
  bool mounted = false;
  for (const json& m : c["volumeMounts"]) mounted |= m["mountPath"] == dir;
  CHECK(mounted);
  const json& pod = workload->at("spec").at("template").at("spec");
  // On a tmpfs (medium Memory) sized for the tree, charged to the container's memory.
  const json* empty_dir = nullptr;
  for (const json& v : pod["volumes"]) {
    if (v["name"] == "emulated") empty_dir = &v;
  }
  REQUIRE(empty_dir != nullptr);
  CHECK(empty_dir->at("emptyDir")["medium"] == "Memory");
  CHECK(empty_dir->at("emptyDir")["sizeLimit"] == size_limit);
  CHECK(c["resources"]["limits"]["memory"] == memory_limit);
  // Never on a node with real Neuron devices: one term whose expressions all exclude them.
  const json& terms = pod["affinity"]["nodeAffinity"]
                         ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
  REQUIRE(terms.size() == 1);
  for (const json& e : terms[0]["matchExpressions"]) CHECK(e["operator"] == "NotIn");
}

TEST_CASE("the emulation sample runs the plugin and agent emulated, with no driver",
          "[operator][emulation]") {
  const DeviceConfig dc = childtest::FromSample(kSample);
  REQUIRE(dc.Emulated());
  CHECK(dc.spec.emulation->instance_type == "trn1.32xlarge");
  CHECK(dc.spec.driver_mode == DriverMode::kPreinstalled);  // nothing to load
  ClusterApis apis;
  apis.kmm = true;  // even where KMM is installed
  const std::vector<Child> children = DesiredChildren(dc, apis, {});
  CHECK(Find(children, "Module", "neuron") == nullptr);
  // trn1.32xlarge's tree: 16 MiB on a tmpfs, sizeLimit 32Mi added to each memory limit.
  CheckEmulated(Find(children, "DaemonSet", "neuron-device-plugin"), "trn1.32xlarge", "32Mi",
                "160Mi");
  CheckEmulated(Find(children, "DaemonSet", "neuron-node-metrics"), "trn1.32xlarge", "32Mi",
                "96Mi");
  // The scheduler and extender place pods as on real hardware.
  CHECK(childtest::RunsExtender(children));
}

TEST_CASE("our DRA driver runs emulated too, with the LNC asked for", "[operator][emulation]") {
  DeviceConfig dc = childtest::FromSample(kSample);
  dc.spec.emulation = Emulation{"trn2.48xlarge", 1};
  dc.spec.allocation = Allocation::kDra;
  dc.spec.allocation_set = true;
  dc.spec.custom_scheduler_image.clear();
  dc.spec.scheduler_extension_image.clear();
  REQUIRE(ValidateDeviceConfig(dc).empty());
  ClusterApis apis;
  apis.dra_version = "v1";
  const std::vector<Child> children = DesiredChildren(dc, apis, {});
  const json* driver = Find(children, "DaemonSet", "neuron-dra-driver");
  // trn2.48xlarge's tree: 54 MiB on a tmpfs, sizeLimit 96Mi.
  CheckEmulated(driver, "trn2.48xlarge", "96Mi", "224Mi");
  CHECK(HasArg(Container(driver), "--lnc=1"));
  CHECK(Find(children, "DaemonSet", "neuron-device-plugin") == nullptr);
}

TEST_CASE("emulation refuses what it cannot emulate, naming the field", "[operator][emulation]") {
  struct Case {
    const char* name;
    Emulation emulation;
    bool aws_dra;
    const char* field;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {"unknown type",
            {"p4d.24xlarge", 0},
            false,
            "spec.emulation.instanceType",
            "not modelled"},
           {"no type", {"", 0}, false, "spec.emulation.instanceType", "is required"},
           {"lnc 3", {"trn2.48xlarge", 3}, false, "spec.emulation.lnc", "1 or 2"},
           {"lnc 2 on inf2", {"inf2.xlarge", 2}, false, "spec.emulation.lnc", "leave lnc unset"},
           {"AWS's driver", {"trn1.2xlarge", 0}, true, "spec.emulation", "cannot emulate"},
       }) {
    CAPTURE(c.name);
    DeviceConfig dc = childtest::FromSample(kSample);
    dc.spec.emulation = c.emulation;
    if (c.aws_dra) {
      dc.spec.dra_driver_image = "public.ecr.aws/neuron/neuron-dra-driver:1.0.1";
      dc.spec.device_plugin_image.clear();
      dc.spec.custom_scheduler_image.clear();
      dc.spec.scheduler_extension_image.clear();
    }
    const std::vector<FieldError> errors = ValidateDeviceConfig(dc);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].field == c.field);
    CHECK(absl::StrContains(errors[0].message, c.says));
  }
  json obj = childtest::LoadYaml(kSample).front();
  obj["spec"]["emulation"] = "trn1.32xlarge";
  auto dc = ParseDeviceConfig(obj);
  REQUIRE(dc.ok());
  const std::vector<FieldError> errors = ValidateDeviceConfig(*dc);
  REQUIRE_FALSE(errors.empty());
  CHECK(errors[0].field == "spec.emulation");
}

TEST_CASE("the status says the stack is emulated, and stops saying so", "[operator][emulation]") {
  DeviceConfig dc = childtest::FromSample(kSample);
  ObservedState seen;
  seen.nodes_matching = 2;
  json status = ComputeStatus(dc, seen, json::object(), absl::FromUnixSeconds(1'800'000'000));
  bool emulated = false;
  for (const json& c : status["conditions"]) {
    if (c["type"] == kEmulatedCondition) {
      emulated = c["status"] == "True";
      CHECK(absl::StrContains(c["message"].get<std::string>(), "trn1.32xlarge"));
    }
    if (c["type"] == "DriverReady" || c["type"] == "Upgrading") CHECK(c["reason"] == "Emulated");
  }
  CHECK(emulated);
  dc.spec.emulation.reset();
  status = ComputeStatus(dc, seen, status, absl::FromUnixSeconds(1'800'000'100));
  for (const json& c : status["conditions"]) CHECK(c["type"] != kEmulatedCondition);
}

}  // namespace
}  // namespace neuron::op
