// File: tests/integration/deploy_scheduler_test.cc
// deploy/scheduler/ against what it configures: the second kube-scheduler's configuration uses
// only kubescheduler.config.k8s.io/v1 fields, passes upstream's validation rules and points at
// the extender's Service, port and real routes; Deployments select their own pods and run flags
// the binary accepts; the extender's RBAC is exactly what it calls.
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

struct SchedulerSetup {
  std::vector<Doc> docs = LoadAll();
  const Doc* config_map = Find(docs, "ConfigMap", "neuron-scheduler-config");
  const Doc* scheduler = Find(docs, "Deployment", "neuron-scheduler");
  const Doc* extender = Find(docs, "Deployment", "neuron-scheduler-extender");
  const Doc* service = Find(docs, "Service", "neuron-scheduler-extender");
  YAML::Node config;
  std::string config_key;

  SchedulerSetup() {
    REQUIRE(config_map != nullptr);
    REQUIRE(scheduler != nullptr);
    REQUIRE(extender != nullptr);
    REQUIRE(service != nullptr);
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

  // urlPrefix -> the Service's cluster DNS name and port -> the container's port and --listen.
  const std::string svc_host = s.service->name() + "." + s.service->ns() + ".svc";
  const int svc_port = s.service->node["spec"]["ports"][0]["port"].as<int>();
  CHECK(e["urlPrefix"].as<std::string>() == "http://" + svc_host + ":" + std::to_string(svc_port));
  const YAML::Node pod = s.extender->node["spec"]["template"]["spec"];
  const YAML::Node port = pod["containers"][0]["ports"][0];
  CHECK(s.service->node["spec"]["ports"][0]["targetPort"].as<std::string>() ==
        port["name"].as<std::string>());
  const int container_port = port["containerPort"].as<int>();
  bool listen_found = false;
  for (const YAML::Node& a : pod["containers"][0]["args"]) {
    const std::string arg = a.as<std::string>();
    if (arg.rfind("--listen=", 0) == 0) {
      listen_found = true;
      CHECK(arg.substr(arg.rfind(':') + 1) == std::to_string(container_port));
    }
  }
  CHECK(listen_found);

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

TEST_CASE("Scheduler Deployments select their own pods and run accepted flags",
          "[deploy][scheduler]") {
  SchedulerSetup s;
  std::set<std::string> accounts;
  for (const Doc& d : s.docs) {
    if (d.kind() == "ServiceAccount") accounts.insert(d.ns() + "/" + d.name());
  }
  for (const Doc* d : {s.scheduler, s.extender}) {
    INFO(d->name());
    const YAML::Node spec = d->node["spec"];
    for (const auto& kv : spec["selector"]["matchLabels"]) {
      CHECK(spec["template"]["metadata"]["labels"][kv.first.as<std::string>()].as<std::string>(
                "") == kv.second.as<std::string>());
    }
    const YAML::Node pod = spec["template"]["spec"];
    CHECK(accounts.count(d->ns() + "/" + pod["serviceAccountName"].as<std::string>()) == 1);
    CHECK(pod["securityContext"]["runAsNonRoot"].as<bool>());
    CHECK(pod["containers"][0]["securityContext"]["readOnlyRootFilesystem"].as<bool>());
  }
  for (const auto& kv : s.service->node["spec"]["selector"]) {
    CHECK(s.extender->node["spec"]["template"]["metadata"]["labels"][kv.first.as<std::string>()]
              .as<std::string>("") == kv.second.as<std::string>());
  }
  const std::set<std::string> flags = HelpFlags("neuron-scheduler-extender");
  REQUIRE_FALSE(flags.empty());
  for (const YAML::Node& a :
       s.extender->node["spec"]["template"]["spec"]["containers"][0]["args"]) {
    const std::string arg = a.as<std::string>();
    const std::string name =
        arg.substr(2, arg.find('=') == std::string::npos ? std::string::npos : arg.find('=') - 2);
    CHECK(flags.count(name) == 1);
  }
}

TEST_CASE("The extender's RBAC is exactly what it calls", "[deploy][scheduler]") {
  SchedulerSetup s;
  const Doc* role = Find(s.docs, "ClusterRole", "neuron-scheduler-extender");
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
  const Doc* binding = Find(s.docs, "ClusterRoleBinding", "neuron-scheduler-extender");
  REQUIRE(binding != nullptr);
  CHECK(binding->node["subjects"][0]["name"].as<std::string>() ==
        s.extender->node["spec"]["template"]["spec"]["serviceAccountName"].as<std::string>());
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
