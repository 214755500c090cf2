// File: tests/operator/children_cache_test.cc
// spec.compileCache: on by default, the CSIDriver cache.neuron.aws.com (cluster-scoped, no
// owner) and a node agent that serves it (flags, privilege, the cache directory, the kubelet's
// directory with Bidirectional propagation, its plugin directories, RBAC over the cache API);
// disabled, none of it; the field read, defaulted and checked.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "lib/operator/children.h"
#include "tests/operator/children_test_util.h"

namespace neuron::op {
namespace {

using childtest::Find;
using childtest::HasArg;
using childtest::Sample;
using nlohmann::json;

const json& Pod(const std::vector<Child>& children) {
  const json* ds = Find(children, "DaemonSet", "neuron-node-metrics");
  REQUIRE(ds != nullptr);
  return ds->at("spec").at("template").at("spec");
}

json Named(const json& list, const std::string& name) {
  for (const json& x : list) {
    if (x.value("name", "") == name) return x;
  }
  return nullptr;
}

bool GrantsSecrets(const std::vector<Child>& children) {
  const json* role = Find(children, "ClusterRole", "aws-neuron-operator-neuron-node-metrics");
  REQUIRE(role != nullptr);
  for (const json& r : role->at("rules")) {
    for (const json& res : r["resources"]) {
      if (res == "secrets") return true;
    }
  }
  return false;
}

TEST_CASE("compile caches are on by default: the CSIDriver and the agent that serves it",
          "[operator][children][cache]") {
  const DeviceConfig dc = Sample();
  REQUIRE(dc.spec.compile_cache.enabled);
  OperatorSettings s;
  s.ns = "ops";
  const std::vector<Child> children = DesiredChildren(dc, {}, s);

  const json* csi = Find(children, "CSIDriver", "cache.neuron.aws.com");
  REQUIRE(csi != nullptr);
  CHECK(csi->at("apiVersion") == "storage.k8s.io/v1");
  CHECK(csi->at("spec") == json{{"attachRequired", false},
                                {"podInfoOnMount", true},
                                {"volumeLifecycleModes", {"Ephemeral"}},
                                {"fsGroupPolicy", "None"},
                                {"requiresRepublish", false}});
  CHECK_FALSE(csi->at("metadata").contains("ownerReferences"));
  CHECK(csi->at("metadata")["labels"][kOwnerLabel] == OwnerLabelValue(dc));
  const std::vector<k8s::ResourceRef> kinds = ChildKinds({});
  CHECK(std::find(kinds.begin(), kinds.end(),
                  k8s::ResourceRef{"storage.k8s.io", "v1", "csidrivers", false}) != kinds.end());

  const json& pod = Pod(children);
  const json& ctr = pod["containers"][0];
  for (const char* arg : {"--cache-dir=/var/lib/neuron/cache", "--csi=true",
                          "--kubelet-dir=/var/lib/kubelet", "--operator-namespace=ops"}) {
    CAPTURE(arg);
    CHECK(HasArg(ctr, arg));
  }
  CHECK(ctr["securityContext"]["privileged"] == true);
  CHECK(pod["terminationGracePeriodSeconds"] == 30);
  CHECK_FALSE(ctr.contains("lifecycle"));  // no preStop
  CHECK(Named(ctr["volumeMounts"], "kubelet-dir") == json{{"name", "kubelet-dir"},
                                                          {"mountPath", "/var/lib/kubelet"},
                                                          {"mountPropagation", "Bidirectional"}});
  CHECK(Named(pod["volumes"], "cache-dir")["hostPath"] ==
        json{{"path", "/var/lib/neuron/cache"}, {"type", "DirectoryOrCreate"}});
  CHECK(Named(ctr["volumeMounts"], "cache-dir")["mountPath"] == "/var/lib/neuron/cache");
  CHECK(Named(pod["volumes"], "kubelet-plugins")["hostPath"]["path"] == "/var/lib/kubelet/plugins");
  CHECK(Named(pod["volumes"], "kubelet-plugins-registry")["hostPath"]["path"] ==
        "/var/lib/kubelet/plugins_registry");
  CHECK(GrantsSecrets(children));
}

TEST_CASE("compile caches follow kubeletRootDir and hostPath", "[operator][children][cache]") {
  DeviceConfig dc = Sample();
  dc.spec.kubelet_root_dir = "/var/lib/k0s/kubelet";
  dc.spec.compile_cache.host_path = "/data/neuron-cache";
  REQUIRE(ValidateDeviceConfig(dc).empty());
  const std::vector<Child> children = DesiredChildren(dc, {}, {});
  const json& pod = Pod(children);
  const json& ctr = pod["containers"][0];
  CHECK(HasArg(ctr, "--kubelet-dir=/var/lib/k0s/kubelet"));
  CHECK(HasArg(ctr, "--cache-dir=/data/neuron-cache"));
  for (const json& m : ctr["volumeMounts"]) {
    CAPTURE(m);
    CHECK_FALSE(absl::StartsWith(m["mountPath"].get<std::string>(), "/var/lib/kubelet"));
    // Every host directory at its host path in the container.
    const json v = Named(pod["volumes"], m["name"]);
    if (v.contains("hostPath") && m["name"] != "host-sys" && m["name"] != "host-neuron-opt") {
      CHECK(v["hostPath"]["path"] == m["mountPath"]);
    }
  }
}

TEST_CASE("compileCache.enabled false leaves the CSIDriver and the agent's cache parts out",
          "[operator][children][cache]") {
  DeviceConfig on = Sample();
  DeviceConfig off = Sample();
  off.spec.compile_cache.enabled = false;
  const std::vector<Child> children = DesiredChildren(off, {}, {});
  CHECK(Find(children, "CSIDriver", "cache.neuron.aws.com") == nullptr);
  const json& pod = Pod(children);
  const json& ctr = pod["containers"][0];
  for (const json& a : ctr["args"]) {
    CAPTURE(a);
    CHECK_FALSE(absl::StrContains(a.get<std::string>(), "cache"));
    CHECK_FALSE(absl::StrContains(a.get<std::string>(), "--csi"));
  }
  CHECK(ctr["securityContext"] == json{{"readOnlyRootFilesystem", true},
                                       {"allowPrivilegeEscalation", false},
                                       {"capabilities", {{"drop", {"ALL"}}}}});
  CHECK(Named(pod["volumes"], "kubelet-dir").is_null());
  CHECK_FALSE(pod.contains("terminationGracePeriodSeconds"));
  CHECK_FALSE(GrantsSecrets(children));
  // Everything else is as with caches on.
  CHECK(DesiredChildren(on, {}, {}).size() == children.size() + 1);
}

TEST_CASE("spec.compileCache is read, defaulted and checked", "[operator][spec][cache]") {
  json obj = childtest::LoadYaml("deploy/operator/samples/deviceconfig-v1beta1.yaml").front();
  obj["metadata"]["uid"] = childtest::kUid;
  absl::StatusOr<DeviceConfig> dc = ParseDeviceConfig(obj);
  REQUIRE(dc.ok());
  CHECK(dc->spec.compile_cache.enabled);
  CHECK(dc->spec.compile_cache.host_path == "/var/lib/neuron/cache");

  obj["spec"]["compileCache"] = {{"enabled", false}, {"hostPath", "/data/cache/"}};
  dc = ParseDeviceConfig(obj);
  REQUIRE(dc.ok());
  CHECK_FALSE(dc->spec.compile_cache.enabled);
  CHECK(dc->spec.compile_cache.host_path == "/data/cache");
  CHECK(ValidateDeviceConfig(*dc).empty());

  for (const json& bad : {json{{"hostPath", "data/cache"}}, json{{"hostPath", "/a/../b"}},
                          json{{"enabled", "yes"}}, json("on")}) {
    CAPTURE(bad);
    obj["spec"]["compileCache"] = bad;
    dc = ParseDeviceConfig(obj);
    REQUIRE(dc.ok());
    const std::vector<FieldError> errors = ValidateDeviceConfig(*dc);
    REQUIRE(errors.size() == 1);
    CHECK(absl::StartsWith(errors[0].field, "spec.compileCache"));
  }
}

}  // namespace
}  // namespace neuron::op
