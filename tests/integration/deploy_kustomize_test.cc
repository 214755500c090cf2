// File: tests/integration/deploy_kustomize_test.cc
// The kustomize base (deploy/operator) and its overlays (deploy/overlays/{eks,openshift,
// emulated}) as `kubectl kustomize` renders them, checked against what the operator really does:
// references resolve (roles, service accounts, selectors), RBAC stays narrow, workloads run
// non-root, the NFD rule is the one the operator itself keeps, the operator accepts each overlay's
// DeviceConfig, and on OpenShift every service account the operator creates may use exactly the
// SCC its pods need.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "lib/operator/yaml_input.h"
#include "nlohmann/json.hpp"
#include "tests/integration/deploy_docs.h"

namespace neuron {
namespace {

using deploytest::BinDir;
using deploytest::RunCommand;
using deploytest::SourceDir;
using nlohmann::json;

constexpr char kNamespace[] = "aws-neuron-operator";

std::vector<json> Parse(const std::string& yaml) {
  auto docs = op::ParseYamlDocuments(yaml);
  REQUIRE(docs.ok());
  return *docs;
}

// `kubectl kustomize deploy/<dir>`, parsed. Any kubectl will do: the files keep to what
// kustomize v2.0.3 (kubectl 1.20) reads as well as v5.
std::vector<json> Kustomize(const std::string& dir) {
  const auto r = RunCommand("kubectl kustomize " + SourceDir() + "/deploy/" + dir + " 2>/dev/null");
  INFO("kubectl kustomize deploy/" << dir);
  REQUIRE(r.status == 0);
  return Parse(r.out);
}

// What `neuron-operator render` applies for `device_config` with the given optional APIs.
std::vector<json> OperatorRender(const json& device_config, const std::string& flags) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "deploy_kustomize_deviceconfig.json").string();
  std::ofstream(path) << device_config.dump();  // JSON is YAML
  const auto r = RunCommand(BinDir() + "/neuron-operator render -f " + path + " " + flags);
  INFO("neuron-operator render " << flags << "\n" << r.out);
  REQUIRE(r.status == 0);
  return Parse(r.out);
}

std::string Key(const json& o) {
  return o.value("kind", "") + "/" + o["metadata"].value("name", "");
}

std::set<std::string> KeysOf(const std::vector<json>& objs) {
  std::set<std::string> out;
  for (const json& o : objs) out.insert(Key(o));
  return out;
}

const json* Find(const std::vector<json>& objs, const std::string& kind) {
  for (const json& o : objs) {
    if (o.value("kind", "") == kind) return &o;
  }
  return nullptr;
}

bool ClusterScoped(const std::string& kind) {
  static const std::set<std::string> kinds = {"Namespace", "CustomResourceDefinition",
                                              "ClusterRole", "ClusterRoleBinding",
                                              "NodeFeatureRule"};
  return kinds.count(kind) > 0;
}

std::vector<json> PodSpecs(const std::vector<json>& objs) {
  std::vector<json> out;
  for (const json& o : objs) {
    const std::string kind = o.value("kind", "");
    if (kind == "Deployment" || kind == "DaemonSet") out.push_back(o["spec"]["template"]["spec"]);
  }
  return out;
}

// Checks every overlay shares: references resolve and nothing reaches wider than it must.
void CheckCommon(const std::vector<json>& objs) {
  const std::set<std::string> keys = KeysOf(objs);
  REQUIRE(keys.count(std::string("Namespace/") + kNamespace) == 1);
  REQUIRE(keys.size() == objs.size());  // no object twice

  for (const json& o : objs) {
    INFO(Key(o));
    const std::string kind = o.value("kind", "");
    if (ClusterScoped(kind)) {
      CHECK_FALSE(o["metadata"].contains("namespace"));
    } else {
      CHECK(o["metadata"].value("namespace", "") == kNamespace);
    }
    const json labels = o["metadata"].value("labels", json::object());
    CHECK(labels.value("app.kubernetes.io/part-of", "") == "aws-neuron");

    if (kind == "ClusterRole" || kind == "Role") {
      for (const json& rule : o["rules"]) {
        for (const char* field : {"apiGroups", "resources", "verbs"}) {
          for (const json& v : rule.value(field, json::array())) CHECK(v != "*");
        }
        // Secrets: only `get` (the operator creates the node agent's role, which reads cache
        // pull secrets by name); never list or watch, which would read them all.
        for (const json& r : rule.value("resources", json::array())) {
          if (r == "secrets") CHECK(rule["verbs"] == json::array({"get"}));
        }
      }
    }
    if (kind == "ClusterRoleBinding" || kind == "RoleBinding") {
      // Bound roles are ours, rendered here (only the operator binds Kubernetes' own roles).
      CHECK(keys.count(o["roleRef"].value("kind", "") + "/" + o["roleRef"].value("name", "")) == 1);
    }
    if (kind == "Deployment") {
      const json& spec = o["spec"];
      for (const auto& [k, v] : spec["selector"]["matchLabels"].items()) {
        CHECK(spec["template"]["metadata"]["labels"].value(k, "") == v);
      }
    }
  }

  for (const json& pod : PodSpecs(objs)) {
    INFO(pod.dump());
    CHECK(keys.count("ServiceAccount/" + pod.value("serviceAccountName", "")) == 1);
    CHECK(pod["securityContext"].value("runAsNonRoot", false));
    for (const json& c : pod["containers"]) {
      const json& sc = c["securityContext"];
      CHECK(sc.value("readOnlyRootFilesystem", false));
      CHECK_FALSE(sc.value("allowPrivilegeEscalation", true));
      CHECK(sc["capabilities"]["drop"] == json::array({"ALL"}));
    }
  }
}

// "registry/path/name:tag" -> "name".
std::string ImageBaseName(std::string image) {
  image = image.substr(0, image.find('@'));
  const size_t slash = image.rfind('/');
  if (slash != std::string::npos) image = image.substr(slash + 1);
  return image.substr(0, image.find(':'));
}

// Every container that runs one of our binaries (installed here, or created by the operator
// for the installed DeviceConfig) runs that binary's own image: a container whose image lacks
// its command never starts, which no fake kubelet would notice.
void CheckImagesRunTheirBinaries(const std::vector<json>& objs, const std::string& render_flags) {
  std::vector<json> containers;
  auto add_pod = [&containers](const json& pod) {
    for (const json& c : pod.value("containers", json::array())) containers.push_back(c);
  };
  for (const json& pod : PodSpecs(objs)) add_pod(pod);
  for (const json& o : OperatorRender(*Find(objs, "DeviceConfig"), render_flags)) {
    const std::string kind = o.value("kind", "");
    if (kind == "Deployment" || kind == "DaemonSet") add_pod(o["spec"]["template"]["spec"]);
    if (kind == "Module") containers.push_back(o["spec"]["devicePlugin"]["container"]);
  }
  int ours = 0;
  for (const json& c : containers) {
    const json command = c.value("command", json::array());
    if (command.empty()) continue;
    const std::string path = command[0];
    constexpr char kBinaryPrefix[] = "/usr/local/bin/neuron-";
    if (path.rfind(kBinaryPrefix, 0) != 0) continue;
    ++ours;
    INFO(c.dump());
    CHECK(ImageBaseName(c.value("image", "")) == path.substr(path.rfind('/') + 1));
  }
  CHECK(ours >= 4);  // operator, device plugin, extender, node agent
}

// The static NFD rule labels nodes exactly as the operator's own rule does, in `group`.
void CheckNfdRule(const std::vector<json>& objs, const std::string& group) {
  const json* rule = Find(objs, "NodeFeatureRule");
  REQUIRE(rule != nullptr);
  CHECK((*rule)["apiVersion"] == group + "/v1alpha1");
  const json* dc = Find(objs, "DeviceConfig");
  REQUIRE(dc != nullptr);
  const auto rendered = OperatorRender(*dc, "--nfd-group=" + group);
  const json* operators = Find(rendered, "NodeFeatureRule");
  REQUIRE(operators != nullptr);
  CHECK((*operators)["apiVersion"] == (*rule)["apiVersion"]);
  CHECK((*operators)["spec"] == (*rule)["spec"]);
  // ...and the sample DeviceConfig selects the label it sets.
  const json& labels = (*rule)["spec"]["rules"][0]["labels"];
  for (const auto& [k, v] : (*dc)["spec"]["selector"].items()) CHECK(labels.value(k, "") == v);
}

TEST_CASE("base: namespace, CRD, operator with its RBAC, NFD rule, sample DeviceConfig") {
  const auto objs = Kustomize("operator");
  CHECK(KeysOf(objs) == std::set<std::string>{
                            "Namespace/aws-neuron-operator",
                            "CustomResourceDefinition/deviceconfigs.k8s.aws",
                            "CustomResourceDefinition/neuroncaches.k8s.aws",
                            "CustomResourceDefinition/clusterneuroncaches.k8s.aws",
                            "CustomResourceDefinition/neuroncachenodes.k8s.aws",
                            "ServiceAccount/neuron-operator",
                            "ClusterRole/neuron-operator",
                            "ClusterRoleBinding/neuron-operator",
                            "Deployment/neuron-operator",
                            "NodeFeatureRule/neuron-nfd-rule",
                            "DeviceConfig/neuron",
                        });
  CheckCommon(objs);
  CheckNfdRule(objs, "nfd.k8s-sigs.io");
  CheckImagesRunTheirBinaries(objs, "--kmm");
  // The base builds the driver with KMM.
  const auto rendered = OperatorRender(*Find(objs, "DeviceConfig"), "--kmm");
  CHECK(Find(rendered, "Module") != nullptr);
}

TEST_CASE("eks overlay: upstream NFD, the AMI's preinstalled driver, no KMM Module") {
  const auto objs = Kustomize("overlays/eks");
  CHECK(KeysOf(objs) == KeysOf(Kustomize("operator")));
  CheckCommon(objs);
  CheckNfdRule(objs, "nfd.k8s-sigs.io");
  const json& spec = (*Find(objs, "DeviceConfig"))["spec"];
  CHECK(spec["driverMode"] == "preinstalled");
  CheckImagesRunTheirBinaries(objs, "--kmm=false");
  CHECK_FALSE(spec.contains("driversImage"));
  // EKS has no KMM: the operator runs the device plugin itself and creates no Module.
  const auto rendered = OperatorRender(*Find(objs, "DeviceConfig"), "--kmm=false");
  CHECK(Find(rendered, "Module") == nullptr);
  bool plugin = false;
  for (const json& o : rendered) {
    plugin |= o.value("kind", "") == "DaemonSet" &&
              o["metadata"].value("name", "").find("device-plugin") != std::string::npos;
  }
  CHECK(plugin);
}

TEST_CASE("emulated overlay: no NFD rule, the sample emulated, no driver") {
  const auto objs = Kustomize("overlays/emulated");
  std::set<std::string> want = KeysOf(Kustomize("operator"));
  want.erase("NodeFeatureRule/neuron-nfd-rule");  // so a cluster without NFD takes it
  CHECK(KeysOf(objs) == want);
  CheckCommon(objs);
  const json& spec = (*Find(objs, "DeviceConfig"))["spec"];
  CHECK(spec["emulation"]["instanceType"] == "trn1.32xlarge");
  CHECK_FALSE(spec.contains("selector"));
  CHECK_FALSE(spec.contains("driversImage"));
  CheckImagesRunTheirBinaries(objs, "--kmm");
  // Even where KMM is served, an emulated DeviceConfig creates no Module; its plugin emulates.
  const auto rendered = OperatorRender(*Find(objs, "DeviceConfig"), "--kmm");
  CHECK(Find(rendered, "Module") == nullptr);
  int emulating = 0;
  for (const json& o : rendered) {
    if (o.value("kind", "") != "DaemonSet") continue;
    for (const json& c : o["spec"]["template"]["spec"]["containers"]) {
      for (const json& arg : c.value("args", json::array())) {
        if (arg.is_string() && arg.get<std::string>() == "--emulate=trn1.32xlarge") ++emulating;
      }
    }
  }
  CHECK(emulating == 2);  // the device plugin and the node agent
}

// On OpenShift: the SCC each pod's service account may use, from the RoleBindings.
std::map<std::string, std::string> SccBySubject(const std::vector<json>& objs) {
  std::map<std::string, std::string> roles_scc;  // ClusterRole -> SCC it grants `use` of
  for (const json& o : objs) {
    if (o.value("kind", "") != "ClusterRole") continue;
    for (const json& rule : o["rules"]) {
      if (rule["resources"] != json::array({"securitycontextconstraints"})) continue;
      CHECK(rule["verbs"] == json::array({"use"}));
      REQUIRE(rule["resourceNames"].size() == 1);
      roles_scc[o["metadata"]["name"]] = rule["resourceNames"][0];
    }
  }
  std::map<std::string, std::string> out;
  for (const json& o : objs) {
    if (o.value("kind", "") == "ClusterRoleBinding") {
      CHECK(roles_scc.count(o["roleRef"].value("name", "")) == 0);  // never cluster-wide
    }
    if (o.value("kind", "") != "RoleBinding") continue;
    const auto scc = roles_scc.find(o["roleRef"].value("name", ""));
    if (scc == roles_scc.end()) continue;
    for (const json& s : o["subjects"]) {
      CHECK(s["namespace"] == kNamespace);
      INFO(s["name"]);
      CHECK(out.emplace(s["name"], scc->second).second);  // one SCC per account
    }
  }
  return out;
}

bool UsesHostPath(const json& pod) {
  for (const json& v : pod.value("volumes", json::array())) {
    if (v.contains("hostPath")) return true;
  }
  return false;
}

TEST_CASE("openshift overlay: OpenShift's NFD group, each account the SCC its pods need") {
  const auto objs = Kustomize("overlays/openshift");
  std::set<std::string> expected = KeysOf(Kustomize("operator"));
  expected.insert({"ClusterRole/neuron-scc-nonroot", "ClusterRole/neuron-scc-privileged",
                   "RoleBinding/neuron-scc-nonroot", "RoleBinding/neuron-scc-privileged"});
  CHECK(KeysOf(objs) == expected);
  CheckCommon(objs);
  CheckNfdRule(objs, "nfd.openshift.io");
  CheckImagesRunTheirBinaries(objs, "--kmm --nfd-group=nfd.openshift.io");

  // What each pod needs: hostPath or a module loader -> privileged; otherwise nonroot-v2 (a
  // fixed non-root UID, which restricted-v2 refuses).
  const json& dc = *Find(objs, "DeviceConfig");
  std::vector<json> pods = PodSpecs(objs);
  std::set<std::string> privileged;
  for (const json& o : OperatorRender(dc, "--nfd-group=nfd.openshift.io --kmm")) {
    const std::string kind = o.value("kind", "");
    if (kind == "Deployment" || kind == "DaemonSet") pods.push_back(o["spec"]["template"]["spec"]);
    if (kind == "Module") {  // KMM runs the loader (modprobe) and the device plugin
      privileged.insert(o["spec"]["moduleLoader"].value("serviceAccountName", ""));
      pods.push_back(o["spec"]["devicePlugin"]);
    }
  }
  // Mixed allocation adds our DRA driver's DaemonSet (host directories: privileged).
  json mixed = dc;
  mixed["spec"]["allocation"] = "mixed";
  for (const json& o : OperatorRender(mixed, "--nfd-group=nfd.openshift.io --kmm --dra")) {
    if (o.value("kind", "") == "DaemonSet") pods.push_back(o["spec"]["template"]["spec"]);
  }
  std::map<std::string, std::string> needed;
  for (const json& pod : pods) {
    const std::string sa = pod.value("serviceAccountName", "");
    REQUIRE_FALSE(sa.empty());
    if (UsesHostPath(pod)) privileged.insert(sa);
    needed[sa] = privileged.count(sa) > 0 ? "privileged" : "nonroot-v2";
  }
  for (const std::string& sa : privileged) needed[sa] = "privileged";
  CHECK(SccBySubject(objs) == needed);
}

}  // namespace
}  // namespace neuron
