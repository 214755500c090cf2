// File: tests/integration/deploy_scheduler_test.cc
// deploy/scheduler/ against what it configures: the second kube-scheduler's configuration uses
// only kubescheduler.config.k8s.io/v1 fields, passes upstream's validation rules and points at
// the extender container beside it on loopback (no Service), at its real routes; the extender
// serves the configured profile and follows the configured Lease; the Deployment runs 2
// replicas, selects its own pods and runs flags the binary accepts (probes included); the
// extender's RBAC is exactly what it calls, bound to the pod's one account.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "lib/extender/app.h"
#include "lib/k8s/rest_client.h"
#include "lib/k8s/transport.h"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/integration/deploy_docs.h"
#include "tests/testing/http_get.h"
#include "tests/testing/subprocess.h"

namespace neuron {
namespace {

using deploytest::Doc;
using deploytest::HelpFlags;
using deploytest::LoadAll;
using Keys = std::set<std::string>;

// Field names (JSON tags) of k8s.io/kube-scheduler/config/v1 types.go, v1.32:
// KubeSchedulerConfiguration, LeaderElectionConfiguration (component-base config/v1alpha1),
// KubeSchedulerProfile, Extender and ExtenderManagedResource.
const Keys kTopKeys = {"apiVersion",
                       "kind",
                       "parallelism",
                       "leaderElection",
                       "clientConnection",
                       "enableProfiling",
                       "enableContentionProfiling",
                       "percentageOfNodesToScore",
                       "podInitialBackoffSeconds",
                       "podMaxBackoffSeconds",
                       "profiles",
                       "extenders",
                       "delayCacheUntilActive"};
const Keys kLeaderKeys = {"leaderElect",  "leaseDuration", "renewDeadline",    "retryPeriod",
                          "resourceLock", "resourceName",  "resourceNamespace"};
const Keys kProfileKeys = {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"};
const Keys kExtenderKeys = {"urlPrefix",   "filterVerb",       "preemptVerb",      "prioritizeVerb",
                            "weight",      "bindVerb",         "enableHTTPS",      "tlsConfig",
                            "httpTimeout", "nodeCacheCapable", "managedResources", "ignorable"};
const Keys kManagedKeys = {"name", "ignoredByScheduler"};

Keys KeysOf(const YAML::Node& map) {
  Keys out;
  for (const auto& kv : map) out.insert(kv.first.as<std::string>());
  return out;
}

bool Subset(const Keys& have, const Keys& allowed) {
  return std::includes(allowed.begin(), allowed.end(), have.begin(), have.end());
}

const Doc* Find(const std::vector<Doc>& docs, const std::string& kind, const std::string& name) {
  for (const Doc& d : docs) {
    if (d.kind() == kind && d.name() == name) return &d;
  }
  return nullptr;
}

// The extender container of the scheduler's pod.
YAML::Node ExtenderContainer(const Doc& scheduler) {
  for (const YAML::Node& c : scheduler.node["spec"]["template"]["spec"]["containers"]) {
    if (c["name"].as<std::string>("") == "extender") return c;
  }
  return YAML::Node();
}

// --name=value -> value, over a container's args ("" when absent).
std::string ArgValue(const YAML::Node& container, const std::string& name) {
  const std::string prefix = "--" + name + "=";
  for (const YAML::Node& a : container["args"]) {
    const std::string arg = a.as<std::string>();
    if (arg.rfind(prefix, 0) == 0) return arg.substr(prefix.size());
  }
  return "";
}

struct SchedulerSetup {
  std::vector<Doc> docs = LoadAll();
  const Doc* config_map = Find(docs, "ConfigMap", "neuron-scheduler-config");
  const Doc* scheduler = Find(docs, "Deployment", "neuron-scheduler");
  YAML::Node extender;
  YAML::Node config;
  std::string config_key;

  SchedulerSetup() {
    REQUIRE(config_map != nullptr);
    REQUIRE(scheduler != nullptr);
    extender = ExtenderContainer(*scheduler);
    REQUIRE(extender.IsMap());
    REQUIRE(config_map->node["data"].size() == 1);
    for (const auto& kv : config_map->node["data"]) {
      config_key = kv.first.as<std::string>();
      config = YAML::Load(kv.second.as<std::string>());
    }
  }
  YAML::Node ExtenderConfig() const { return config["extenders"][0]; }
};

TEST_CASE("The second scheduler's configuration is valid v1 and reaches the extender",
          "[deploy][scheduler]") {
  SchedulerSetup s;
  const YAML::Node& c = s.config;
  CHECK(c["apiVersion"].as<std::string>() == "kubescheduler.config.k8s.io/v1");
  CHECK(c["kind"].as<std::string>() == "KubeSchedulerConfiguration");
  CHECK(Subset(KeysOf(c), kTopKeys));
  CHECK(Subset(KeysOf(c["leaderElection"]), kLeaderKeys));
  REQUIRE(c["profiles"].size() == 1);
  CHECK(Subset(KeysOf(c["profiles"][0]), kProfileKeys));
  CHECK(c["profiles"][0]["schedulerName"].as<std::string>() == "neuron-scheduler");
  REQUIRE(c["extenders"].size() == 1);
  const YAML::Node e = s.ExtenderConfig();
  CHECK(Subset(KeysOf(e), kExtenderKeys));
  for (const YAML::Node& m : e["managedResources"]) CHECK(Subset(KeysOf(m), kManagedKeys));

  // Upstream validation: weight > 0 with a prioritizeVerb; managed resources named once.
  CHECK(e["weight"].as<int>() > 0);
  Keys managed;
  for (const YAML::Node& m : e["managedResources"]) {
    CHECK(managed.insert(m["name"].as<std::string>()).second);
    CHECK_FALSE(m["ignoredByScheduler"].as<bool>());
  }
  CHECK(managed == Keys{"aws.amazon.com/neuron", "aws.amazon.com/neuroncore"});
  CHECK(e["nodeCacheCapable"].as<bool>());
  CHECK_FALSE(e["ignorable"].as<bool>(false));
  CHECK(e["httpTimeout"].as<std::string>().back() == 's');  // a duration string

  // urlPrefix -> the extender container's --listen, on loopback: only the kube-scheduler in
  // its pod can call it. Nothing routes to it from outside: no Service, no container port.
  CHECK(e["urlPrefix"].as<std::string>() == "http://127.0.0.1:12345");
  CHECK(e["urlPrefix"].as<std::string>() == "http://" + ArgValue(s.extender, "listen"));
  CHECK_FALSE(e["enableHTTPS"].as<bool>(false));
  CHECK_FALSE(s.extender["ports"]);
  for (const Doc& d : s.docs) {
    INFO(d.file << " " << d.kind() << " " << d.name());
    if (d.file.rfind("deploy/scheduler/", 0) == 0) CHECK(d.kind() != "Service");
    CHECK(d.name() != "neuron-scheduler-extender");  // the old shape's objects
  }
  // The extender serves the profile kube-scheduler runs, and follows its leader-election Lease.
  CHECK(ArgValue(s.extender, "scheduler-name") ==
        c["profiles"][0]["schedulerName"].as<std::string>());
  CHECK(ArgValue(s.extender, "leader-lease") ==
        c["leaderElection"]["resourceNamespace"].as<std::string>() + "/" +
            c["leaderElection"]["resourceName"].as<std::string>());
  CHECK(c["leaderElection"]["leaderElect"].as<bool>());

  // Two replicas, one leader; preferably on two nodes; the default rolling update.
  const YAML::Node spec = s.scheduler->node["spec"];
  CHECK(spec["replicas"].as<int>() == 2);
  CHECK_FALSE(spec["strategy"]);
  const YAML::Node anti = spec["template"]["spec"]["affinity"]["podAntiAffinity"]
                              ["preferredDuringSchedulingIgnoredDuringExecution"];
  REQUIRE(anti.size() == 1);
  CHECK(anti[0]["weight"].as<int>() == 100);
  CHECK(anti[0]["podAffinityTerm"]["topologyKey"].as<std::string>() == "kubernetes.io/hostname");
  for (const auto& kv : spec["selector"]["matchLabels"]) {
    CHECK(anti[0]["podAffinityTerm"]["labelSelector"]["matchLabels"][kv.first.as<std::string>()]
              .as<std::string>("") == kv.second.as<std::string>());
  }

  // The scheduler reads the file the ConfigMap provides, and its lease is the one it may use.
  const YAML::Node sched = s.scheduler->node["spec"]["template"]["spec"];
  const YAML::Node mount = sched["containers"][0]["volumeMounts"][0];
  bool config_flag = false;
  for (const YAML::Node& a : sched["containers"][0]["command"]) {
    const std::string arg = a.as<std::string>();
    if (arg.rfind("--config=", 0) == 0) {
      config_flag = true;
      CHECK(arg.substr(9) == mount["mountPath"].as<std::string>() + "/" + s.config_key);
    }
  }
  CHECK(config_flag);
  CHECK(sched["volumes"][0]["configMap"]["name"].as<std::string>() == s.config_map->name());
  CHECK(c["leaderElection"]["resourceNamespace"].as<std::string>() == s.scheduler->ns());
  const Doc* lease_role = Find(s.docs, "Role", "neuron-scheduler-leader-election");
  REQUIRE(lease_role != nullptr);
  bool named = false;
  for (const YAML::Node& r : lease_role->node["rules"]) {
    if (r["resourceNames"]) {
      named = r["resourceNames"][0].as<std::string>() ==
              c["leaderElection"]["resourceName"].as<std::string>();
    }
  }
  CHECK(named);
}

TEST_CASE("The scheduler Deployment selects its own pods and runs accepted flags",
          "[deploy][scheduler]") {
  SchedulerSetup s;
  std::set<std::string> accounts;
  for (const Doc& d : s.docs) {
    if (d.kind() == "ServiceAccount") accounts.insert(d.ns() + "/" + d.name());
  }
  const Doc* d = s.scheduler;
  const YAML::Node spec = d->node["spec"];
  for (const auto& kv : spec["selector"]["matchLabels"]) {
    CHECK(spec["template"]["metadata"]["labels"][kv.first.as<std::string>()].as<std::string>("") ==
          kv.second.as<std::string>());
  }
  const YAML::Node pod = spec["template"]["spec"];
  CHECK(accounts.count(d->ns() + "/" + pod["serviceAccountName"].as<std::string>()) == 1);
  CHECK(pod["securityContext"]["runAsNonRoot"].as<bool>());
  REQUIRE(pod["containers"].size() == 2);
  for (const YAML::Node& c : pod["containers"]) {
    INFO(c["name"].as<std::string>());
    CHECK(c["securityContext"]["readOnlyRootFilesystem"].as<bool>());
  }

  // Every flag of the extender's args and of its exec probes is one the binary documents, and
  // the probes ask the address it serves on (the kubelet's httpGet cannot reach loopback).
  const std::set<std::string> flags = HelpFlags("neuron-scheduler-extender");
  REQUIRE_FALSE(flags.empty());
  auto flag_name = [](const std::string& arg) {
    const size_t eq = arg.find('=');
    return arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
  };
  const std::string command = s.extender["command"][0].as<std::string>();
  CHECK(command == "/usr/local/bin/neuron-scheduler-extender");
  for (const YAML::Node& a : s.extender["args"]) {
    INFO(a.as<std::string>());
    CHECK(flags.count(flag_name(a.as<std::string>())) == 1);
  }
  for (const char* probe : {"readinessProbe", "livenessProbe"}) {
    INFO(probe);
    const YAML::Node p = s.extender[probe];
    CHECK_FALSE(p["httpGet"]);
    const YAML::Node cmd = p["exec"]["command"];
    REQUIRE(cmd.size() == 3);
    CHECK(cmd[0].as<std::string>() == command);
    CHECK(cmd[1].as<std::string>() == "--listen=" + ArgValue(s.extender, "listen"));
    CHECK(cmd[2].as<std::string>() ==
          std::string("--probe=") +
              (std::string(probe) == "readinessProbe" ? "/readyz" : "/healthz"));
    for (size_t i = 1; i < cmd.size(); ++i) {
      INFO(cmd[i].as<std::string>());
      CHECK(flags.count(flag_name(cmd[i].as<std::string>())) == 1);
    }
  }
}

TEST_CASE("The extender's RBAC is exactly what it calls", "[deploy][scheduler]") {
  SchedulerSetup s;
  const Doc* role = Find(s.docs, "ClusterRole", "neuron-scheduler-as-extender");
  REQUIRE(role != nullptr);
  std::map<std::string, Keys> verbs;  // "group/resource" -> verbs
  for (const YAML::Node& r : role->node["rules"]) {
    CHECK_FALSE(r["resourceNames"]);
    for (const YAML::Node& g : r["apiGroups"]) {
      for (const YAML::Node& res : r["resources"]) {
        for (const YAML::Node& v : r["verbs"]) {
          verbs[g.as<std::string>() + "/" + res.as<std::string>()].insert(v.as<std::string>());
        }
      }
    }
  }
  // lib/extender: ViewFeed lists + watches nodes and pods; Binder creates pods/binding (with
  // the annotations in it) and gets a pod its watch has not shown yet. No patch, no Events.
  const std::map<std::string, Keys> want = {{"/nodes", {"list", "watch"}},
                                            {"/pods", {"get", "list", "watch"}},
                                            {"/pods/binding", {"create"}}};
  CHECK(verbs == want);
  // Bound to the scheduler pod's one account, which the extender container runs as.
  const Doc* binding = Find(s.docs, "ClusterRoleBinding", "neuron-scheduler-as-extender");
  REQUIRE(binding != nullptr);
  CHECK(binding->node["roleRef"]["name"].as<std::string>() == role->name());
  REQUIRE(binding->node["subjects"].size() == 1);
  CHECK(binding->node["subjects"][0]["name"].as<std::string>() ==
        s.scheduler->node["spec"]["template"]["spec"]["serviceAccountName"].as<std::string>());
  CHECK(binding->node["subjects"][0]["namespace"].as<std::string>() == s.scheduler->ns());
  // It reads the Lease --leader-lease names: the scheduler's lease Role grants get on it.
  const Doc* lease_role = Find(s.docs, "Role", "neuron-scheduler-leader-election");
  REQUIRE(lease_role != nullptr);
  bool readable = false;
  for (const YAML::Node& r : lease_role->node["rules"]) {
    if (!r["resourceNames"]) continue;
    bool get = false;
    for (const YAML::Node& v : r["verbs"]) get |= v.as<std::string>() == "get";
    readable |= get && s.scheduler->ns() + "/" + r["resourceNames"][0].as<std::string>() ==
                           ArgValue(s.extender, "leader-lease");
  }
  CHECK(readable);
}

TEST_CASE("Every configured verb is a route the real extender serves", "[deploy][scheduler]") {
  SchedulerSetup s;
  fakes::FakeApiServer api;
  REQUIRE(api.Start().ok());
  k8s::ClientConfig cfg;
  cfg.server = api.url();
  auto transport = k8s::NewTransport(cfg);
  REQUIRE(transport.ok());
  auto client = std::make_shared<k8s::RestClient>(*transport);
  extender::AppOptions o;
  o.listen = "127.0.0.1:0";
  extender::App app(o, client);
  REQUIRE(app.Start().ok());
  REQUIRE(testing::Eventually([&] { return app.ready(); }));
  // A pod that asks for nothing Neuron: every verb answers it without touching the cluster.
  const nlohmann::json pod = {{"metadata", {{"name", "p"}, {"namespace", "ml"}, {"uid", "u"}}},
                              {"spec", {{"containers", {{{"name", "c"}}}}}}};
  const std::map<std::string, std::string> bodies = {
      {"filterVerb", nlohmann::json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", {"n"}}}.dump()},
      {"prioritizeVerb",
       nlohmann::json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", {"n"}}}.dump()},
      {"preemptVerb",
       nlohmann::json{{"Pod", pod}, {"NodeNameToMetaVictims", nlohmann::json::object()}}.dump()},
      {"bindVerb",
       nlohmann::json{{"PodName", "p"}, {"PodNamespace", "ml"}, {"PodUID", "u"}, {"Node", "n"}}
           .dump()}};
  const YAML::Node e = s.ExtenderConfig();
  for (const auto& [field, body] : bodies) {
    const std::string verb = e[field].as<std::string>();
    INFO(field << " = " << verb);
    auto r = testing::HttpPost(app.port(), "/" + verb, body);
    CHECK(r.status == 200);  // bind of an unknown pod: 200 with an Error, as kube-scheduler reads
  }
  app.Stop();
}

}  // namespace
}  // namespace neuron
