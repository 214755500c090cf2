// File: tests/fakes/apiserver/fake_apiserver_eviction_test.cc
// pods/eviction and PodDisruptionBudgets (with the emulated disruption controller) of the fake
// apiserver over real HTTP, and cordoning a Node with a merge patch, as a drain does them.
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/fakes/apiserver/test_client.h"

namespace neuron::fakes {
namespace {

using nlohmann::json;
using testing::Call;

constexpr char kEvictionPods[] = "/api/v1/namespaces/ns/pods";
constexpr char kPdbs[] = "/apis/policy/v1/namespaces/ns/poddisruptionbudgets";
constexpr char kEvictionDeploys[] = "/apis/apps/v1/namespaces/ns/deployments";
constexpr char kMerge[] = "application/merge-patch+json";

struct EvictionServer {
  EvictionServer() { REQUIRE(fake.Start().ok()); }
  FakeApiServer fake;
  int port() const { return fake.port(); }
};

// A Deployment whose spec.replicas is the scale the disruption controller counts against;
// returns its uid. (No deployment controller runs: the tests create the pods.)
std::string Deployment(EvictionServer& s, const std::string& name, int replicas) {
  auto r = Call(s.port(), "POST", kEvictionDeploys,
                json{{"apiVersion", "apps/v1"},
                     {"kind", "Deployment"},
                     {"metadata", {{"name", name}}},
                     {"spec", {{"replicas", replicas}}}});
  REQUIRE(r.status == 201);
  return r.body["metadata"]["uid"].get<std::string>();
}

// A Running pod labelled app=<app>, Ready or not, controlled by `owner` (a Deployment's uid) if
// given.
void MakePod(EvictionServer& s, const std::string& name, const std::string& app, bool ready,
             const std::string& owner = "", const std::string& phase = "Running") {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"labels", {{"app", app}}}}},
              {"spec", {{"containers", {{{"name", "c"}, {"image", "img:1"}}}}}},
              {"status",
               {{"phase", phase},
                {"conditions", {{{"type", "Ready"}, {"status", ready ? "True" : "False"}}}}}}};
  if (!owner.empty()) {
    pod["metadata"]["ownerReferences"] = {{{"apiVersion", "apps/v1"},
                                           {"kind", "Deployment"},
                                           {"name", app},
                                           {"uid", owner},
                                           {"controller", true}}};
  }
  REQUIRE(Call(s.port(), "POST", kEvictionPods, pod).status == 201);
}

void MakePdb(EvictionServer& s, const std::string& name, const json& spec) {
  auto r = Call(s.port(), "POST", kPdbs,
                json{{"apiVersion", "policy/v1"},
                     {"kind", "PodDisruptionBudget"},
                     {"metadata", {{"name", name}}},
                     {"spec", spec}});
  REQUIRE(r.status == 201);
}

json Selector(const std::string& app) { return {{"matchLabels", {{"app", app}}}}; }

testing::Reply Evict(EvictionServer& s, const std::string& pod,
                     const json& delete_options = nullptr) {
  json body = {{"apiVersion", "policy/v1"},
               {"kind", "Eviction"},
               {"metadata", {{"name", pod}, {"namespace", "ns"}}}};
  if (!delete_options.is_null()) body["deleteOptions"] = delete_options;
  return Call(s.port(), "POST", std::string(kEvictionPods) + "/" + pod + "/eviction", body);
}

json PdbStatus(EvictionServer& s, const std::string& name) {
  return s.fake.Get(std::string(kPdbs) + "/" + name).value("status", json::object());
}

bool Exists(EvictionServer& s, const std::string& pod) {
  return !s.fake.Get(std::string(kEvictionPods) + "/" + pod).is_null();
}

// The events of a watch from `rv` that ends after one second.
std::vector<json> WatchFrom(EvictionServer& s, const std::string& collection, int64_t rv) {
  httplib::Client cli("127.0.0.1", s.port());
  cli.set_read_timeout(30, 0);
  const std::string path =
      collection + "?watch=1&timeoutSeconds=1&resourceVersion=" + std::to_string(rv);
  auto r = cli.Get(path.c_str());
  REQUIRE(r);
  std::vector<json> events;
  std::string body = r->body;
  for (size_t nl; (nl = body.find('\n')) != std::string::npos; body.erase(0, nl + 1)) {
    if (nl > 0) events.push_back(json::parse(body.substr(0, nl)));
  }
  return events;
}

TEST_CASE("eviction without a budget deletes the pod and answers 201 Success", "[apiserver]") {
  EvictionServer s;
  MakePod(s, "p", "web", true);
  const int64_t rv = s.fake.ResourceVersion();
  auto r = Evict(s, "p");
  REQUIRE(r.status == 201);
  CHECK(r.body == json{{"kind", "Status"},
                       {"apiVersion", "v1"},
                       {"metadata", json::object()},
                       {"status", "Success"},
                       {"code", 201}});
  CHECK(!Exists(s, "p"));
  CHECK(Call(s.port(), "GET", std::string(kEvictionPods) + "/p").status == 404);
  // As upstream: the pod is marked DisruptionTarget, then deleted.
  std::vector<json> events = WatchFrom(s, kEvictionPods, rv);
  REQUIRE(events.size() == 2);
  CHECK(events[0]["type"] == "MODIFIED");
  bool marked = false;
  for (const json& c : events[0]["object"]["status"]["conditions"]) {
    marked |= c.value("type", "") == "DisruptionTarget" && c.value("status", "") == "True" &&
              c.value("reason", "") == "EvictionByEvictionAPI" &&
              c.value("message", "") == "Eviction API: evicting";
  }
  CHECK(marked);
  CHECK(events[1]["type"] == "DELETED");

  // policy/v1beta1 Evictions are accepted too; discovery announces the subresource as kubectl
  // drain looks for it.
  MakePod(s, "q", "web", true);
  auto beta = Call(
      s.port(), "POST", std::string(kEvictionPods) + "/q/eviction",
      json{{"apiVersion", "policy/v1beta1"}, {"kind", "Eviction"}, {"metadata", {{"name", "q"}}}});
  CHECK(beta.status == 201);
  CHECK(!Exists(s, "q"));
  bool listed = false;
  const json core = Call(s.port(), "GET", "/api/v1").body;
  for (const json& res : core.value("resources", json::array())) {
    listed |= res.value("name", "") == "pods/eviction" && res.value("group", "") == "policy" &&
              res.value("version", "") == "v1" && res.value("kind", "") == "Eviction";
  }
  CHECK(listed);
}

TEST_CASE("eviction of an unknown pod is 404, a name mismatch 400", "[apiserver]") {
  EvictionServer s;
  auto missing = Evict(s, "nope");
  CHECK(missing.status == 404);
  CHECK(missing.body["reason"] == "NotFound");
  CHECK(missing.body["message"] == "pods \"nope\" not found");
  CHECK(missing.body["details"]["kind"] == "pods");

  MakePod(s, "p", "web", true);
  auto mismatch = Call(
      s.port(), "POST", std::string(kEvictionPods) + "/p/eviction",
      json{{"apiVersion", "policy/v1"}, {"kind", "Eviction"}, {"metadata", {{"name", "other"}}}});
  CHECK(mismatch.status == 400);
  CHECK(mismatch.body["reason"] == "BadRequest");
  CHECK(mismatch.body["message"] == "name in URL does not match name in Eviction object");
  CHECK(Exists(s, "p"));
  CHECK(Call(s.port(), "GET", std::string(kEvictionPods) + "/p/eviction").status == 405);
}

TEST_CASE("a budget with maxUnavailable 1 over three Ready pods allows one eviction at a time",
          "[apiserver]") {
  EvictionServer s;
  const std::string uid = Deployment(s, "web", 3);
  for (const char* p : {"a", "b", "c"}) MakePod(s, p, "web", true, uid);
  MakePdb(s, "web-pdb", {{"maxUnavailable", 1}, {"selector", Selector("web")}});
  json st = PdbStatus(s, "web-pdb");
  CHECK(st["expectedPods"] == 3);
  CHECK(st["desiredHealthy"] == 2);
  CHECK(st["currentHealthy"] == 3);
  CHECK(st["disruptionsAllowed"] == 1);
  CHECK(st["observedGeneration"] == 1);
  REQUIRE(st["conditions"].size() == 1);
  CHECK(st["conditions"][0]["type"] == "DisruptionAllowed");
  CHECK(st["conditions"][0]["status"] == "True");
  CHECK(st["conditions"][0]["reason"] == "SufficientPods");

  const int64_t rv = s.fake.ResourceVersion();
  REQUIRE(Evict(s, "a").status == 201);
  CHECK(!Exists(s, "a"));
  // The eviction recorded the pod in disruptedPods; the controller dropped it once it was gone.
  bool recorded = false;
  for (const json& e : WatchFrom(s, kPdbs, rv)) {
    recorded |= e.value("/object/status/disruptedPods"_json_pointer, json::object()).contains("a");
  }
  CHECK(recorded);
  st = PdbStatus(s, "web-pdb");
  CHECK(st["currentHealthy"] == 2);
  CHECK(st["expectedPods"] == 3);
  CHECK(st["disruptionsAllowed"] == 0);
  CHECK(!st.contains("disruptedPods"));
  CHECK(st["conditions"][0]["status"] == "False");
  CHECK(st["conditions"][0]["reason"] == "InsufficientPods");

  auto refused = Evict(s, "b");
  REQUIRE(refused.status == 429);
  CHECK(refused.body["kind"] == "Status");
  CHECK(refused.body["status"] == "Failure");
  CHECK(refused.body["reason"] == "TooManyRequests");
  CHECK(refused.body["code"] == 429);
  CHECK(refused.body["message"] ==
        "Cannot evict pod as it would violate the pod's disruption budget.");
  CHECK(refused.body["details"]["causes"] ==
        json::array({{{"reason", "DisruptionBudget"},
                      {"message",
                       "The disruption budget web-pdb needs 2 healthy pods and has 2 "
                       "currently"}}}));
  CHECK(Exists(s, "b"));

  // A replacement that is not Ready yet does not help; once Ready, the next eviction is allowed.
  MakePod(s, "d", "web", false, uid);
  CHECK(Evict(s, "b").status == 429);
  REQUIRE(Call(s.port(), "PATCH", std::string(kEvictionPods) + "/d/status",
               json{{"status", {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}},
               kMerge)
              .status == 200);
  CHECK(PdbStatus(s, "web-pdb")["disruptionsAllowed"] == 1);
  CHECK(Evict(s, "b").status == 201);
  CHECK(!Exists(s, "b"));
  CHECK(Evict(s, "c").status == 429);
}

TEST_CASE("minAvailable as a percent of the controller's scale, rounded up", "[apiserver]") {
  EvictionServer s;
  const std::string uid = Deployment(s, "web", 4);
  for (const char* p : {"a", "b", "c", "d"}) MakePod(s, p, "web", true, uid);
  MakePdb(s, "web-pdb", {{"minAvailable", "60%"}, {"selector", Selector("web")}});
  json st = PdbStatus(s, "web-pdb");
  CHECK(st["expectedPods"] == 4);
  CHECK(st["desiredHealthy"] == 3);  // ceil(2.4)
  CHECK(st["disruptionsAllowed"] == 1);
  CHECK(Evict(s, "a").status == 201);
  auto refused = Evict(s, "b");
  CHECK(refused.status == 429);
  CHECK(refused.body["details"]["causes"][0]["message"] ==
        "The disruption budget web-pdb needs 3 healthy pods and has 3 currently");

  // An integer minAvailable counts the selected pods, controlled or not.
  MakePod(s, "x", "solo", true);
  MakePod(s, "y", "solo", true);
  MakePdb(s, "solo-pdb", {{"minAvailable", 1}, {"selector", Selector("solo")}});
  st = PdbStatus(s, "solo-pdb");
  CHECK(st["expectedPods"] == 2);
  CHECK(st["desiredHealthy"] == 1);
  CHECK(st["disruptionsAllowed"] == 1);
  CHECK(Evict(s, "x").status == 201);
  CHECK(Evict(s, "y").status == 429);
}

TEST_CASE("a pod under two budgets cannot be evicted: 500", "[apiserver]") {
  EvictionServer s;
  MakePod(s, "p", "web", true);
  MakePdb(s, "one", {{"minAvailable", 0}, {"selector", Selector("web")}});
  const json in_web_or_api = {{"key", "app"}, {"operator", "In"}, {"values", {"web", "api"}}};
  json two = {{"minAvailable", 0}};
  two["selector"]["matchExpressions"] = json::array({in_web_or_api});
  MakePdb(s, "two", two);
  auto r = Evict(s, "p");
  CHECK(r.status == 500);
  CHECK(r.body["status"] == "Failure");
  CHECK(r.body["code"] == 500);
  CHECK(!r.body.contains("reason"));
  CHECK(r.body["message"] ==
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not "
        "support.");
  CHECK(Exists(s, "p"));
}

TEST_CASE("unready, pending and terminal pods go despite an exhausted budget", "[apiserver]") {
  EvictionServer s;
  const std::string uid = Deployment(s, "web", 3);
  MakePod(s, "a", "web", true, uid);
  MakePod(s, "b", "web", true, uid);
  MakePod(s, "c", "web", false, uid);
  MakePdb(s, "web-pdb", {{"maxUnavailable", 1}, {"selector", Selector("web")}});
  CHECK(PdbStatus(s, "web-pdb")["disruptionsAllowed"] == 0);
  CHECK(Evict(s, "a").status == 429);
  // Not Ready while the budget has its 2 desired healthy pods: deleted, nothing used up.
  CHECK(Evict(s, "c").status == 201);
  CHECK(!Exists(s, "c"));
  MakePod(s, "pending", "web", false, uid, "Pending");
  MakePod(s, "done", "web", true, uid, "Succeeded");
  CHECK(Evict(s, "pending").status == 201);
  CHECK(Evict(s, "done").status == 201);
  CHECK(Exists(s, "a"));
  CHECK(Exists(s, "b"));
}

TEST_CASE("an unready pod under a budget short of healthy pods needs AlwaysAllow", "[apiserver]") {
  EvictionServer s;
  MakePod(s, "a", "web", true);
  MakePod(s, "b", "web", false);
  MakePdb(s, "web-pdb", {{"minAvailable", 2}, {"selector", Selector("web")}});
  auto r = Evict(s, "b");
  CHECK(r.status == 429);
  CHECK(r.body["details"]["causes"][0]["message"] ==
        "The disruption budget web-pdb needs 2 healthy pods and has 1 currently");
  REQUIRE(Call(s.port(), "PATCH", std::string(kPdbs) + "/web-pdb",
               json{{"spec", {{"unhealthyPodEvictionPolicy", "AlwaysAllow"}}}}, kMerge)
              .status == 200);
  CHECK(Evict(s, "b").status == 201);
  CHECK(Evict(s, "a").status == 429);
}

TEST_CASE("a budget whose pods' controller is missing fails sync and allows nothing",
          "[apiserver]") {
  EvictionServer s;
  const std::string gone = "00000000-0000-4000-8000-000000000000";
  // Synced once (no pods yet), then the sync fails: the condition says why.
  MakePdb(s, "web-pdb", {{"maxUnavailable", 1}, {"selector", Selector("web")}});
  MakePod(s, "a", "web", true, gone);
  MakePod(s, "b", "web", true, gone);
  json st = PdbStatus(s, "web-pdb");
  CHECK(st["disruptionsAllowed"] == 0);
  CHECK(st["observedGeneration"] == 1);
  CHECK(st["conditions"][0]["status"] == "False");
  CHECK(st["conditions"][0]["reason"] == "SyncFailed");
  CHECK(st["conditions"][0]["message"] == "found no controllers for pod \"a\"");
  auto r = Evict(s, "a");
  CHECK(r.status == 429);
  CHECK(r.body["details"]["causes"][0]["message"] ==
        "The disruption budget web-pdb does not allow evicting pods currently because it failed "
        "sync: found no controllers for pod \"a\"");

  // Never synced (its sync failed from the start, so observedGeneration lags generation): the
  // eviction is told to come back, as upstream says it, with a retry hint.
  MakePod(s, "c", "api", true, gone);
  MakePdb(s, "api-pdb", {{"maxUnavailable", 1}, {"selector", Selector("api")}});
  auto later = Evict(s, "c");
  CHECK(later.status == 429);
  CHECK(later.body["details"]["retryAfterSeconds"] == 10);
  CHECK(later.body["details"]["causes"][0]["message"] ==
        "The disruption budget api-pdb is still being processed by the server.");
}

TEST_CASE("eviction honours deleteOptions preconditions and dryRun", "[apiserver]") {
  EvictionServer s;
  MakePod(s, "p", "web", true);
  auto conflict = Evict(s, "p", {{"preconditions", {{"uid", "not-the-uid"}}}});
  CHECK(conflict.status == 409);
  CHECK(conflict.body["reason"] == "Conflict");
  CHECK(Exists(s, "p"));
  CHECK(Evict(s, "p", {{"dryRun", {"All"}}}).status == 201);
  CHECK(Exists(s, "p"));
  const std::string uid = s.fake.Get(std::string(kEvictionPods) + "/p")["metadata"]["uid"];
  CHECK(Evict(s, "p", {{"preconditions", {{"uid", uid}}}}).status == 201);
  CHECK(!Exists(s, "p"));
}

TEST_CASE("cordon: a merge patch of spec.unschedulable on a Node, seen by a watch", "[apiserver]") {
  EvictionServer s;
  REQUIRE(Call(s.port(), "POST", "/api/v1/nodes",
               json{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n1"}}}})
              .status == 201);
  const int64_t rv = s.fake.ResourceVersion();
  auto r = Call(s.port(), "PATCH", "/api/v1/nodes/n1", json{{"spec", {{"unschedulable", true}}}},
                kMerge);
  REQUIRE(r.status == 200);
  CHECK(r.body["spec"]["unschedulable"] == true);
  std::vector<json> events = WatchFrom(s, "/api/v1/nodes", rv);
  REQUIRE(events.size() == 1);
  CHECK(events[0]["type"] == "MODIFIED");
  CHECK(events[0]["object"]["spec"]["unschedulable"] == true);
  auto cordoned =
      Call(s.port(), "GET", "/api/v1/nodes?fieldSelector=spec.unschedulable%3Dtrue").body;
  REQUIRE(cordoned["items"].size() == 1);
  CHECK(cordoned["items"][0]["metadata"]["name"] == "n1");
}

}  // namespace
}  // namespace neuron::fakes
