// File: tests/operator/children_test.cc
// The desired children of a DeviceConfig: golden YAML (UPDATE_GOLDEN=1 rewrites it) for the
// seed's sample in both API versions, AWS's DRA mode, our DRA driver (all nodes; mixed pools),
// preinstalled mode, and OpenShift NFD with a
// ServiceMonitor; and what every child set must hold: owners, selectors that select, accounts
// that exist, the scheduler configuration naming the extender beside it on loopback, every Neuron
// PCI id in the NFD rule, objects left out when their API is not served.
#include "lib/operator/children.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include "absl/strings/str_replace.h"
#include "lib/operator/render.h"
#include "lib/topology/device_model.h"
#include "tests/operator/children_test_util.h"

namespace neuron::op {
namespace {

using childtest::Find;
using childtest::Sample;
using childtest::Variant;
using childtest::Variants;
using nlohmann::json;

std::string Name(const json& obj) { return obj["metadata"]["name"].get<std::string>(); }

TEST_CASE("children match the golden files", "[operator][children]") {
  for (const Variant& v : Variants()) {
    const std::string rel = "tests/operator/golden/" + v.golden + ".yaml";
    const std::string text = RenderYaml(DesiredChildren(v.dc, v.apis, {}));
    CHECK(text == RenderYaml(DesiredChildren(v.dc, v.apis, {})));  // deterministic
    if (std::getenv("UPDATE_GOLDEN") != nullptr) {
      std::ofstream(childtest::SourcePath(rel)) << text;
      WARN("rewrote " << rel);
      continue;
    }
    CAPTURE(rel);
    CHECK(text == childtest::ReadFile(rel));
  }
}

TEST_CASE("the API versions differ only in the ownerReference", "[operator][children]") {
  const std::vector<Variant> v = Variants();
  REQUIRE(v[1].golden == "sample-v1alpha1");
  const std::string alpha = absl::StrReplaceAll(RenderYaml(DesiredChildren(v[1].dc, v[1].apis, {})),
                                                {{"k8s.aws/v1alpha1", "k8s.aws/v1beta1"}});
  // The samples' one difference in spec: v1alpha1 requires customSchedulerImage.
  DeviceConfig beta = v[0].dc;
  beta.spec.custom_scheduler_image = v[1].dc.spec.custom_scheduler_image;
  CHECK(alpha == RenderYaml(DesiredChildren(beta, v[0].apis, {})));
}

TEST_CASE("every child set holds together", "[operator][children]") {
  std::vector<Variant> all = Variants();
  ClusterApis bare;  // plain Kubernetes without KMM or NFD
  bare.kmm = false;
  bare.nfd_group = "";
  all.push_back({"bare", Sample(), bare});
  for (const Variant& v : all) {
    const std::vector<Child> children = DesiredChildren(v.dc, v.apis, {});
    const std::vector<k8s::ResourceRef> kinds = ChildKinds(v.apis);
    std::set<std::string> accounts, cluster_roles, names;
    for (const Child& c : children) {
      if (c.object["kind"] == "ServiceAccount") accounts.insert(Name(c.object));
      if (c.object["kind"] == "ClusterRole") cluster_roles.insert(Name(c.object));
    }
    for (const Child& c : children) {
      const json& meta = c.object["metadata"];
      const std::string kind = c.object["kind"];
      CAPTURE(v.golden, kind, Name(c.object));
      CHECK(c.object["apiVersion"] == c.ref.GroupVersion());
      CHECK(std::find(kinds.begin(), kinds.end(), c.ref) != kinds.end());  // pruning sees it
      CHECK(names.insert(c.ref.resource + "/" + Name(c.object)).second);
      CHECK(meta["labels"][kOwnerLabel] == OwnerLabelValue(v.dc));
      CHECK(meta["labels"][kManagedByLabel] == kManagedByValue);
      CHECK(meta["labels"][kComponentLabel] == ComponentName(c.component));
      if (c.ref.namespaced) {
        CHECK(meta["namespace"] == v.dc.ns);
        REQUIRE(meta["ownerReferences"].size() == 1);
        const json& owner = meta["ownerReferences"][0];
        CHECK(owner == json{{"apiVersion", v.dc.api_version},
                            {"kind", "DeviceConfig"},
                            {"name", v.dc.name},
                            {"uid", v.dc.uid},
                            {"controller", true},
                            {"blockOwnerDeletion", true}});
      } else {
        // A namespaced owner is invalid for a cluster-scoped dependent; names carry the
        // namespace so two DeviceConfigs of one name cannot collide.
        CHECK_FALSE(meta.contains("ownerReferences"));
        CHECK_FALSE(meta.contains("namespace"));
        // DeviceClasses excepted: AWS's templates name neuron.aws.com; and the CSIDriver, named
        // after the driver the kubelet looks up.
        if (kind != "DeviceClass" && kind != "CSIDriver") {
          CHECK(Name(c.object).rfind(v.dc.ns + "-" + v.dc.name + "-", 0) == 0);
        }
      }
      if (kind == "ClusterRoleBinding" || kind == "RoleBinding") {
        for (const json& s : c.object["subjects"]) CHECK(accounts.count(s["name"]) == 1);
        const std::string role = c.object["roleRef"]["name"];
        if (kind == "ClusterRoleBinding") {
          CHECK((cluster_roles.count(role) == 1 || role.rfind("system:", 0) == 0));
        } else {
          CHECK(Find(children, "Role", role) != nullptr);
        }
      }
      if (kind == "DaemonSet" || kind == "Deployment") {
        const json& spec = c.object["spec"];
        const json& pod_labels = spec["template"]["metadata"]["labels"];
        REQUIRE_FALSE(spec["selector"]["matchLabels"].empty());
        for (auto& [k, val] : spec["selector"]["matchLabels"].items()) {
          CHECK(pod_labels.value(k, json()) == val);
        }
        const json& pod = spec["template"]["spec"];
        CHECK(accounts.count(pod["serviceAccountName"].get<std::string>()) == 1);
        if (v.dc.spec.image_repo_secret.empty()) {
          CHECK_FALSE(pod.contains("imagePullSecrets"));
        } else {
          CHECK(pod["imagePullSecrets"] == json::array({{{"name", v.dc.spec.image_repo_secret}}}));
        }
        if (kind == "DaemonSet") CHECK((pod.contains("nodeSelector") || pod.contains("affinity")));
        for (const json& ctr : pod["containers"]) {
          CHECK_FALSE(ctr.value("image", std::string()).empty());
          // Only the node agent serving compiled-model caches and the DRA driver making claims'
          // cache views mount (children_cache.cc, children_dra_driver.cc).
          const json& name = c.object["metadata"]["name"];
          const bool may_be_privileged =
              (name == v.dc.name + "-node-metrics" || name == v.dc.name + "-dra-driver") &&
              v.dc.spec.compile_cache.enabled;
          if (!may_be_privileged) {
            CHECK_FALSE(ctr.value("securityContext", json::object()).value("privileged", false));
          }
        }
      }
      if (kind == "Module") {
        const json& spec = c.object["spec"];
        CHECK(accounts.count(spec["moduleLoader"]["serviceAccountName"]) == 1);
        CHECK(spec.value("imageRepoSecret", json::object()).value("name", "") ==
              v.dc.spec.image_repo_secret);
        // DRA replaces the device plugin, and in mixed allocation the plugin is a DaemonSet
        // of ours (a Module cannot keep off DRA nodes): KMM only loads the driver then.
        const bool in_module =
            v.dc.RunsDevicePlugin() && v.dc.spec.allocation == Allocation::kDevicePlugin;
        REQUIRE(spec.contains("devicePlugin") == in_module);
        if (!in_module) continue;
        CHECK(accounts.count(spec["devicePlugin"]["serviceAccountName"]) == 1);
        const json& ctr = spec["devicePlugin"]["container"];
        CHECK_FALSE(ctr.contains("name"));  // not fields of KMM's container spec
        CHECK_FALSE(ctr.contains("securityContext"));
        // KMM mounts the kubelet's device-plugin directory itself; a second mount is invalid.
        for (const json& m : ctr["volumeMounts"]) {
          CHECK(m["mountPath"] != "/var/lib/kubelet/device-plugins");
        }
      }
    }
  }
}

TEST_CASE("the scheduler calls the extender beside it, on loopback, for every verb",
          "[operator][children]") {
  for (bool dra_served : {false, true}) {
    const DeviceConfig dc = Sample();
    ClusterApis apis;
    apis.dra_version = dra_served ? "v1" : "v1beta1";
    const std::vector<Child> children = DesiredChildren(dc, apis, {});
    const json* cm = Find(children, "ConfigMap", "neuron-scheduler-config");
    const json* sched = Find(children, "Deployment", "neuron-custom-scheduler");
    REQUIRE((cm && sched));
    // No way in from outside the pod: no Service, no Deployment, no account of its own.
    for (const Child& c : children) {
      CAPTURE(c.object["kind"], Name(c.object));
      CHECK(Name(c.object).find("extension") == std::string::npos);
      if (c.object["kind"] == "Service") CHECK(Name(c.object) == "neuron-node-metrics");
      if (c.object["kind"] == "Deployment") CHECK(Name(c.object) == "neuron-custom-scheduler");
    }
    REQUIRE(cm->at("data").size() == 1);
    const std::string key = cm->at("data").begin().key();
    auto parsed = ParseYamlDocuments(cm->at("data").begin().value().get<std::string>());
    REQUIRE(parsed.ok());
    REQUIRE(parsed->size() == 1);
    const json& config = parsed->front();
    CHECK(config["apiVersion"] == "kubescheduler.config.k8s.io/v1");
    CHECK(config["kind"] == "KubeSchedulerConfiguration");
    CHECK(config["profiles"] == json::array({{{"schedulerName", SchedulerProfileName(dc)}}}));
    CHECK(SchedulerProfileName(dc) == "neuron-scheduler");
    CHECK(config["leaderElection"]["leaderElect"] == true);
    CHECK(config["leaderElection"]["resourceName"] == "neuron-custom-scheduler");
    CHECK(config["leaderElection"]["resourceNamespace"] == dc.ns);
    const json* lease = Find(children, "Role", "neuron-custom-scheduler-leader-election");
    REQUIRE(lease != nullptr);
    CHECK(lease->at("rules")[1]["resourceNames"][0] == config["leaderElection"]["resourceName"]);
    CHECK(lease->at("rules")[1]["verbs"] == json::array({"get", "update"}));

    REQUIRE(config["extenders"].size() == 1);
    const json& e = config["extenders"][0];
    CHECK(e["urlPrefix"] == "http://127.0.0.1:12345");
    for (const char* verb : {"filter", "prioritize", "preempt", "bind"}) {
      CHECK(e[std::string(verb) + "Verb"] == verb);
    }
    CHECK(e["weight"] == 5);  // required > 0 with prioritizeVerb
    CHECK(e["nodeCacheCapable"] == true);
    CHECK(e["enableHTTPS"] == false);
    CHECK(e["ignorable"] == false);
    CHECK(e["httpTimeout"] == "10s");
    CHECK(e["managedResources"] ==
          json::array({{{"name", "aws.amazon.com/neuron"}, {"ignoredByScheduler", false}},
                       {{"name", "aws.amazon.com/neuroncore"}, {"ignoredByScheduler", false}}}));

    // Two replicas, one leader, preferably on two nodes; the default (rolling) update.
    const json& spec = sched->at("spec");
    CHECK(spec["replicas"] == 2);
    CHECK_FALSE(spec.contains("strategy"));
    const json& pod = spec["template"]["spec"];
    const json& terms =
        pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"];
    REQUIRE(terms.size() == 1);
    CHECK(terms[0]["weight"] == 100);
    CHECK(terms[0]["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname");
    CHECK(terms[0]["podAffinityTerm"]["labelSelector"]["matchLabels"] ==
          spec["selector"]["matchLabels"]);

    // The extender: urlPrefix's address is its --listen; it serves this profile, follows this
    // Lease, exposes no port, and probes itself (httpGet cannot reach loopback).
    REQUIRE(pod["containers"].size() == 2);
    const json& ext = pod["containers"][1];
    CHECK(ext["name"] == "extender");
    CHECK(ext["image"] == dc.spec.scheduler_extension_image);
    CHECK(ext["command"] == json::array({"/usr/local/bin/neuron-scheduler-extender"}));
    CHECK(ext["args"] ==
          json::array({"--listen=127.0.0.1:12345", "--scheduler-name=" + SchedulerProfileName(dc),
                       "--leader-lease=" + dc.ns + "/" +
                           config["leaderElection"]["resourceName"].get<std::string>(),
                       "--policy=binpack", "--log-json"}));
    CHECK(e["urlPrefix"] == "http://" + ext["args"][0].get<std::string>().substr(9));
    CHECK_FALSE(ext.contains("ports"));
    for (const char* probe : {"readinessProbe", "livenessProbe"}) {
      CAPTURE(probe);
      CHECK_FALSE(ext[probe].contains("httpGet"));
      CHECK(ext[probe]["exec"]["command"][0] == ext["command"][0]);
      CHECK(ext[probe]["exec"]["command"][1] == ext["args"][0]);
    }
    CHECK(ext["readinessProbe"]["exec"]["command"][2] == "--probe=/readyz");
    CHECK(ext["livenessProbe"]["exec"]["command"][2] == "--probe=/healthz");

    // One account for the pod, holding the extender's ClusterRole too.
    const json* binding = Find(children, "ClusterRoleBinding",
                               "aws-neuron-operator-neuron-custom-scheduler-extender");
    REQUIRE(binding != nullptr);
    CHECK(binding->at("subjects") == json::array({{{"kind", "ServiceAccount"},
                                                   {"name", pod["serviceAccountName"]},
                                                   {"namespace", dc.ns}}}));
    const json* role =
        Find(children, "ClusterRole", "aws-neuron-operator-neuron-custom-scheduler-extender");
    REQUIRE(role != nullptr);
    CHECK(role->at("rules") ==
          json::array(
              {{{"apiGroups", {""}}, {"resources", {"nodes"}}, {"verbs", {"list", "watch"}}},
               {{"apiGroups", {""}}, {"resources", {"pods"}}, {"verbs", {"get", "list", "watch"}}},
               {{"apiGroups", {""}}, {"resources", {"pods/binding"}}, {"verbs", {"create"}}}}));

    // The scheduler reads the ConfigMap where its --config flag says.
    CHECK(pod["volumes"][0]["configMap"]["name"] == Name(*cm));
    const json& cmd = pod["containers"][0]["command"];
    CHECK(cmd[1] ==
          "--config=" + pod["containers"][0]["volumeMounts"][0]["mountPath"].get<std::string>() +
              "/" + key);
    const bool gate_off = std::find(cmd.begin(), cmd.end(),
                                    "--feature-gates=DynamicResourceAllocation=false") != cmd.end();
    CHECK(gate_off == !dra_served);
  }
}

TEST_CASE("images: the spec's, else the operator's defaults", "[operator][children]") {
  DeviceConfig dc = Sample();
  dc.spec.custom_scheduler_image.clear();
  OperatorSettings s;
  s.default_node_agent_image = "example.com/agent:1";
  s.kube_scheduler_image = "example.com/kube-scheduler:1";
  ClusterApis apis;  // the API server's version unknown (render)
  auto image = [&](const char* kind, const std::string& name) {
    const std::vector<Child> children = DesiredChildren(dc, apis, s);
    const json* o = Find(children, kind, name);
    REQUIRE(o != nullptr);
    return o->at("spec")["template"]["spec"]["containers"][0]["image"].get<std::string>();
  };
  CHECK(image("DaemonSet", "neuron-node-metrics") == "example.com/agent:1");
  CHECK(image("Deployment", "neuron-custom-scheduler") == "example.com/kube-scheduler:1");
  // Known, the default kube-scheduler is upstream's of the API server's version.
  apis.server_version = KubeVersion{1, 32, 13};
  CHECK(image("Deployment", "neuron-custom-scheduler") ==
        "registry.k8s.io/kube-scheduler:v1.32.13");
  dc.spec.node_agent_image = "example.com/agent:2";
  dc.spec.custom_scheduler_image = "example.com/kube-scheduler:2";
  CHECK(image("DaemonSet", "neuron-node-metrics") == "example.com/agent:2");
  CHECK(image("Deployment", "neuron-custom-scheduler") == "example.com/kube-scheduler:2");
  apis.server_version.reset();
  CHECK(image("Deployment", "neuron-custom-scheduler") == "example.com/kube-scheduler:2");
}

TEST_CASE("the NFD rule lists every Neuron PCI device id", "[operator][children]") {
  std::set<std::string> want;
  for (uint32_t id = 0; id <= 0xffff; ++id) {
    if (topology::ModelForPciDevice(static_cast<uint16_t>(id))) {
      char hex[5];
      std::snprintf(hex, sizeof(hex), "%04x", static_cast<unsigned>(id));
      want.insert(hex);
    }
  }
  for (const char* id : {"7064", "7065", "7066", "7067", "7164", "7264", "7364", "7564"}) {
    CHECK(want.count(id) == 1);  // inf1 x4, trn1, inf2, trn2, trn3
  }
  for (const char* group : {"nfd.k8s-sigs.io", "nfd.openshift.io"}) {
    ClusterApis apis;
    apis.nfd_group = group;
    const std::vector<Child> children = DesiredChildren(Sample(), apis, {});
    const json* rule = Find(children, "NodeFeatureRule", "aws-neuron-operator-neuron-neuron");
    REQUIRE(rule != nullptr);
    CHECK(rule->at("apiVersion") == std::string(group) + "/v1alpha1");
    const json& r = rule->at("spec")["rules"][0];
    CHECK(r["labels"] == json{{"feature.node.kubernetes.io/aws-neuron", "true"}});
    REQUIRE(r["matchFeatures"].size() == 1);
    CHECK(r["matchFeatures"][0]["feature"] == "pci.device");
    const json& m = r["matchFeatures"][0]["matchExpressions"];
    CHECK(m["vendor"] == json{{"op", "In"}, {"value", {"1d0f"}}});
    CHECK(m["device"]["op"] == "In");  // OpenShift's NFD accepts fewer operators
    CHECK(std::set<std::string>(m["device"]["value"].begin(), m["device"]["value"].end()) == want);
  }
}

TEST_CASE("objects of an API that is not served are left out", "[operator][children]") {
  ClusterApis none;
  none.kmm = false;
  none.nfd_group = "";
  none.service_monitor = false;
  for (const Child& c : DesiredChildren(Sample(), none, {})) {
    CHECK(c.object["kind"] != "Module");
    CHECK(c.object["kind"] != "NodeFeatureRule");
    CHECK(c.object["kind"] != "ServiceMonitor");
    CHECK(c.component != Component::kDriver);  // no loader account without its Module
  }
  ClusterApis monitoring;
  monitoring.service_monitor = true;
  const std::vector<Child> with = DesiredChildren(Sample(), monitoring, {});
  const json* sm = Find(with, "ServiceMonitor", "neuron-node-metrics");
  const json* svc = Find(with, "Service", "neuron-node-metrics");
  REQUIRE((sm && svc));
  for (auto& [k, val] : sm->at("spec")["selector"]["matchLabels"].items()) {
    CHECK(svc->at("metadata")["labels"].value(k, json()) == val);
  }
  CHECK(sm->at("spec")["endpoints"][0]["port"] == svc->at("spec")["ports"][0]["name"]);
}

TEST_CASE("deletion goes from the device's users to the driver", "[operator][children]") {
  const std::vector<Component> order = DeletionOrder();
  CHECK(order.size() == 6);
  CHECK(std::set<Component>(order.begin(), order.end()).size() == 6);
  CHECK(order.front() == Component::kMetrics);
  CHECK(order.back() == Component::kDriver);  // modprobe -r fails under a live plugin
  auto pos = [&](Component c) { return std::find(order.begin(), order.end(), c) - order.begin(); };
  CHECK(pos(Component::kDevicePlugin) < pos(Component::kDriver));
  CHECK(pos(Component::kDra) < pos(Component::kDriver));
}

TEST_CASE(
    "the node agent's account may get and patch nodes (and, with caches, the cache API), "
    "and its token is mounted",
    "[operator][children]") {
  const DeviceConfig dc = Sample();
  const std::vector<Child> children = DesiredChildren(dc, {}, {});
  const json* ds = Find(children, "DaemonSet", "neuron-node-metrics");
  REQUIRE(ds != nullptr);
  const json& pod = ds->at("spec").at("template").at("spec");
  CHECK(pod.value("automountServiceAccountToken", true));
  const json* sa = Find(children, "ServiceAccount", "neuron-node-metrics");
  REQUIRE(sa != nullptr);
  CHECK(sa->value("automountServiceAccountToken", true));
  const std::string role_name = "aws-neuron-operator-neuron-node-metrics";
  const json* role = Find(children, "ClusterRole", role_name);
  REQUIRE(role != nullptr);
  // Nodes first; with compiled-model caches (on by default) the cache API after
  // (children_cache_test.cc).
  CHECK(role->at("rules").front() ==
        json{{"apiGroups", {""}}, {"resources", {"nodes"}}, {"verbs", {"get", "patch"}}});
  DeviceConfig no_cache = dc;
  no_cache.spec.compile_cache.enabled = false;
  CHECK(
      Find(DesiredChildren(no_cache, {}, {}), "ClusterRole", role_name)->at("rules") ==
      json::array({{{"apiGroups", {""}}, {"resources", {"nodes"}}, {"verbs", {"get", "patch"}}}}));
  const json* binding = Find(children, "ClusterRoleBinding", role_name);
  REQUIRE(binding != nullptr);
  CHECK(binding->at("roleRef").at("name") == role_name);
  CHECK(binding->at("subjects") == json::array({{{"kind", "ServiceAccount"},
                                                 {"name", pod.at("serviceAccountName")},
                                                 {"namespace", dc.ns}}}));
}

}  // namespace
}  // namespace neuron::op
