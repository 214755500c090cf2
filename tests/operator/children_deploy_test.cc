// File: tests/operator/children_deploy_test.cc
// The operator's objects run our binaries exactly as the hand-written, tested manifests in
// deploy/ do (args, probes, resources, security, RBAC, scheduler configuration), apart from
// names and images and the differences listed here on purpose:
// - /opt/aws/neuron is mounted for the plugin and the agent (the LNC file EKS writes);
// - the Neuron-node affinity also accepts the aws-neuron label of our NodeFeatureRule;
// - kube-scheduler gets --feature-gates=DynamicResourceAllocation=false where DRA is not served;
// - no RoleBinding in kube-system for the scheduler (not ownable, not prunable).
// And deploy/operator/operator.yaml grants the operator every child kind and every permission
// the roles it creates hold (RBAC refuses a role with more than its creator has).
#include <string>
#include <vector>

#include "tests/operator/children_test_util.h"

namespace neuron::op {
namespace {

using childtest::Find;
using childtest::LoadYaml;
using childtest::PodSpec;
using nlohmann::json;

const json* FindDoc(const std::vector<json>& docs, const std::string& kind,
                    const std::string& name) {
  for (const json& d : docs) {
    if (d["kind"] == kind && d["metadata"]["name"] == name) return &d;
  }
  return nullptr;
}

// A container without its image and without the mounts the operator adds on purpose.
json Comparable(json c) {
  c.erase("image");
  if (c.contains("volumeMounts")) {
    json kept = json::array();
    for (const json& m : c["volumeMounts"]) {
      if (m["name"] != "host-neuron-opt") kept.push_back(m);
    }
    c["volumeMounts"] = kept;
  }
  return c;
}

json WithoutVolume(const json& volumes, const char* name) {
  json kept = json::array();
  for (const json& v : volumes) {
    if (v["name"] != name) kept.push_back(v);
  }
  return kept;
}

// The pod fields deploy/ sets besides containers, volumes and placement.
void CheckPodFields(const json& ours, const json& theirs) {
  for (const char* f :
       {"priorityClassName", "securityContext", "tolerations", "automountServiceAccountToken",
        "hostNetwork", "terminationGracePeriodSeconds"}) {
    CAPTURE(f);
    CHECK(ours.value(f, json()) == theirs.value(f, json()));
  }
}

TEST_CASE("scheduler and extender match deploy/scheduler", "[operator][children][deploy]") {
  const std::vector<json> deploy = LoadYaml("deploy/scheduler/kube-scheduler.yaml");
  const DeviceConfig dc = childtest::Sample();
  const std::vector<Child> ours = DesiredChildren(dc, {}, {});

  // The configuration, with deploy/'s names in place of this DeviceConfig's.
  const json* cm = Find(ours, "ConfigMap", "neuron-scheduler-config");
  const json* their_cm = FindDoc(deploy, "ConfigMap", "neuron-scheduler-config");
  REQUIRE((cm && their_cm));
  CHECK(cm->at("data").begin().key() == their_cm->at("data").begin().key());
  auto config = ParseYamlDocuments(cm->at("data").begin().value().get<std::string>());
  auto their_config = ParseYamlDocuments(their_cm->at("data").begin().value().get<std::string>());
  REQUIRE((config.ok() && their_config.ok()));
  json c = config->front();
  c["leaderElection"]["resourceName"] = "neuron-scheduler";
  CHECK(c == their_config->front());

  const json* deployment = Find(ours, "Deployment", "neuron-custom-scheduler");
  const json* their_deployment = FindDoc(deploy, "Deployment", "neuron-scheduler");
  const json sched = PodSpec(deployment);
  const json their_sched = PodSpec(their_deployment);
  REQUIRE(sched["containers"].size() == 2);
  REQUIRE(their_sched["containers"].size() == 2);
  json ctr = Comparable(sched["containers"][0]);
  REQUIRE(ctr["command"].back() == "--feature-gates=DynamicResourceAllocation=false");
  ctr["command"].erase(ctr["command"].size() - 1);
  CHECK(ctr == Comparable(their_sched["containers"][0]));
  // The extender: the same but for the Lease it follows (named after the Deployment).
  json ext = Comparable(sched["containers"][1]);
  REQUIRE(ext["args"][2] == "--leader-lease=aws-neuron-operator/neuron-custom-scheduler");
  ext["args"][2] = "--leader-lease=aws-neuron-operator/neuron-scheduler";
  CHECK(ext == Comparable(their_sched["containers"][1]));
  CheckPodFields(sched, their_sched);
  json volumes = sched["volumes"];
  volumes[0]["configMap"]["name"] = "neuron-scheduler-config";
  CHECK(volumes == their_sched["volumes"]);
  json affinity = sched["affinity"];
  affinity["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
          ["podAffinityTerm"]["labelSelector"]["matchLabels"]["app.kubernetes.io/name"] =
              "neuron-scheduler";
  CHECK(affinity == their_sched["affinity"]);
  CHECK(deployment->at("spec")["replicas"] == their_deployment->at("spec")["replicas"]);
  CHECK(deployment->at("spec").value("strategy", json()) ==
        their_deployment->at("spec").value("strategy", json()));

  CHECK(Find(ours, "ClusterRole", "aws-neuron-operator-neuron-custom-scheduler-extender")
            ->at("rules") ==
        FindDoc(deploy, "ClusterRole", "neuron-scheduler-as-extender")->at("rules"));
  json lease = Find(ours, "Role", "neuron-custom-scheduler-leader-election")->at("rules");
  lease[1]["resourceNames"] = {"neuron-scheduler"};
  CHECK(lease == FindDoc(deploy, "Role", "neuron-scheduler-leader-election")->at("rules"));
  // Every ClusterRole the pod's account is bound to, here and there.
  for (const char* role : {"system:kube-scheduler", "system:volume-scheduler"}) {
    int bound = 0;
    for (const Child& ch : ours) {
      if (ch.object["kind"] == "ClusterRoleBinding" && ch.object["roleRef"]["name"] == role) {
        ++bound;
      }
    }
    CHECK(bound == 1);
  }
  int theirs_bound = 0;
  for (const json& d : deploy) {
    if (d["kind"] != "ClusterRoleBinding") continue;
    CHECK(d["subjects"] == json::array({{{"kind", "ServiceAccount"},
                                         {"name", their_sched["serviceAccountName"]},
                                         {"namespace", "aws-neuron-operator"}}}));
    ++theirs_bound;
  }
  CHECK(theirs_bound == 3);  // kube-scheduler, volume-scheduler, the extender's
}

TEST_CASE("device plugin matches deploy/device-plugin", "[operator][children][deploy]") {
  const std::vector<json> deploy = LoadYaml("deploy/device-plugin/daemonset.yaml");
  const json* their_ds = FindDoc(deploy, "DaemonSet", "neuron-device-plugin");
  const json theirs = PodSpec(their_ds);
  DeviceConfig dc = childtest::Sample();
  dc.spec.driver_mode = DriverMode::kPreinstalled;
  dc.spec.selector.clear();
  const std::vector<Child> pre = DesiredChildren(dc, {}, {});
  const json ours = PodSpec(Find(pre, "DaemonSet", "neuron-device-plugin"));
  CHECK(Comparable(ours["containers"][0]) == Comparable(theirs["containers"][0]));
  CHECK(WithoutVolume(ours["volumes"], "host-neuron-opt") == theirs["volumes"]);
  CheckPodFields(ours, theirs);
  // deploy/'s terms, then the one our NodeFeatureRule adds.
  json terms = ours["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                   ["nodeSelectorTerms"];
  CHECK(terms.back()["matchExpressions"][0]["key"] == "feature.node.kubernetes.io/aws-neuron");
  terms.erase(terms.size() - 1);
  CHECK(terms == theirs["affinity"]["nodeAffinity"]
                       ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]);
  CHECK(Find(pre, "ClusterRole", "aws-neuron-operator-neuron-device-plugin")->at("rules") ==
        FindDoc(deploy, "ClusterRole", "neuron-device-plugin")->at("rules"));

  // Under KMM: the same container, less what KMM provides (name, privileged securityContext,
  // the device-plugin directory) and what its devicePlugin container cannot say (ports).
  const std::vector<Child> kmm = DesiredChildren(childtest::Sample(), {}, {});
  const json* module = Find(kmm, "Module", "neuron");
  REQUIRE(module != nullptr);
  json theirs_for_kmm = Comparable(theirs["containers"][0]);
  theirs_for_kmm.erase("name");
  theirs_for_kmm.erase("securityContext");
  theirs_for_kmm.erase("ports");
  theirs_for_kmm["volumeMounts"].erase(0);  // device-plugins
  CHECK(Comparable(module->at("spec")["devicePlugin"]["container"]) == theirs_for_kmm);
}

TEST_CASE("node agent matches deploy/node-agent", "[operator][children][deploy]") {
  const std::vector<json> deploy = LoadYaml("deploy/node-agent/daemonset.yaml");
  const json theirs = PodSpec(FindDoc(deploy, "DaemonSet", "neuron-node-agent"));
  const std::vector<Child> ours_all = DesiredChildren(childtest::Sample(), {}, {});
  const json ours = PodSpec(Find(ours_all, "DaemonSet", "neuron-node-metrics"));
  CHECK(Comparable(ours["containers"][0]) == Comparable(theirs["containers"][0]));
  CHECK(WithoutVolume(ours["volumes"], "host-neuron-opt") == theirs["volumes"]);
  CheckPodFields(ours, theirs);
  // The sample's selector becomes the nodeSelector.
  CHECK(ours["nodeSelector"] == json{{"feature.node.kubernetes.io/aws-neuron", "true"}});
  json svc = Find(ours_all, "Service", "neuron-node-metrics")->at("spec");
  svc["ports"][0].erase("protocol");
  svc["selector"]["app.kubernetes.io/name"] = "neuron-node-agent";
  CHECK(svc == FindDoc(deploy, "Service", "neuron-node-agent")->at("spec"));
  // Compiled-model caches: the same CSIDriver and the same grants.
  const json* csi = Find(ours_all, "CSIDriver", "cache.neuron.aws.com");
  const json* their_csi = FindDoc(deploy, "CSIDriver", "cache.neuron.aws.com");
  REQUIRE((csi && their_csi));
  CHECK(csi->at("spec") == their_csi->at("spec"));
  CHECK(Find(ours_all, "ClusterRole", "aws-neuron-operator-neuron-node-metrics")->at("rules") ==
        FindDoc(deploy, "ClusterRole", "neuron-node-agent")->at("rules"));
}

}  // namespace
}  // namespace neuron::op

namespace neuron::op {
namespace {

// Whether one of `rules` grants `verb` on `group`/`resource` (and, for a named grant, on all of
// `names`).
bool Grants(const json& rules, const std::string& group, const std::string& resource,
            const std::string& verb, const json& names) {
  auto has = [](const json& list, const std::string& v) {
    for (const json& x : list) {
      if (x == v || x == "*") return true;
    }
    return false;
  };
  for (const json& r : rules) {
    if (!has(r["apiGroups"], group) || !has(r["resources"], resource)) continue;
    if (!has(r["verbs"], verb)) continue;
    if (!r.contains("resourceNames")) return true;
    bool all = !names.empty();
    for (const json& n : names) all = all && has(r["resourceNames"], n.get<std::string>());
    if (all) return true;
  }
  return false;
}

// RBAC lets the operator create a role only with permissions it holds itself, and it applies,
// lists and deletes every child kind: deploy/operator/operator.yaml must grant both, in every
// mode (our DRA driver's role and the DeviceClasses included).
TEST_CASE("the operator's ClusterRole covers every child and every role it creates",
          "[operator][children][deploy]") {
  const std::vector<json> deploy = LoadYaml("deploy/operator/operator.yaml");
  const json* op = FindDoc(deploy, "ClusterRole", "neuron-operator");
  REQUIRE(op != nullptr);
  const json& rules = op->at("rules");
  for (const childtest::Variant& v : childtest::Variants()) {
    ClusterApis apis = v.apis;
    apis.service_monitor = true;
    for (const Child& c : DesiredChildren(v.dc, apis, {})) {
      CAPTURE(v.golden, c.object["kind"], c.object["metadata"]["name"]);
      for (const char* verb : {"get", "list", "watch", "create", "patch", "delete"}) {
        CHECK(Grants(rules, c.ref.group, c.ref.resource, verb, json::array()));
      }
      const std::string kind = c.object["kind"];
      if (kind != "ClusterRole" && kind != "Role") continue;
      for (const json& r : c.object["rules"]) {
        for (const json& g : r["apiGroups"]) {
          for (const json& res : r["resources"]) {
            for (const json& verb : r["verbs"]) {
              CAPTURE(g, res, verb);
              CHECK(Grants(rules, g, res, verb, r.value("resourceNames", json::array())));
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace neuron::op
