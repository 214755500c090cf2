#include "tests/k8s/client_suite.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "catch2/catch.hpp"
#include "lib/k8s/discovery.h"
#include "lib/k8s/errors.h"
#include "lib/k8s/events.h"
#include "lib/k8s/informer.h"
#include "lib/k8s/object_fields.h"
#include "tests/fakes/fake_clock.h"

namespace neuron::k8s::suite {

using nlohmann::json;
using resources::kConfigMaps;
using resources::kPods;

std::string UniqueSuffix() { return absl::StrCat(absl::ToUnixMicros(absl::Now()) % 100000000); }

RunLabel::RunLabel() : value(absl::StrCat("run-", UniqueSuffix())) {}

ScopedNamespace::ScopedNamespace(RestClient& client, std::string ns)
    : client_(client), ns_(std::move(ns)) {
  auto r =
      client_.Create(resources::kNamespaces, "",
                     {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns_}}}});
  REQUIRE(r.ok());
}

ScopedNamespace::~ScopedNamespace() {
  (void)client_.Delete(resources::kNamespaces, "", ns_, {.propagation_policy = "Background"});
}

namespace {

json ConfigMap(const std::string& name, const json& data, const json& labels = json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"data", data}};
}

std::string Rv(const json& obj) { return obj["metadata"].value("resourceVersion", ""); }

// `labels` plus this run's label.
json With(const RunLabel& run, json labels = json::object()) {
  labels[RunLabel::kKey] = run.value;
  return labels;
}

}  // namespace

void CrudAndErrors(RestClient& c, const std::string& ns) {
  auto created = c.Create(kConfigMaps, ns, ConfigMap("cm1", {{"k", "v"}}));
  REQUIRE(created.ok());
  CHECK(!Rv(*created).empty());
  CHECK(!(*created)["metadata"].value("uid", "").empty());
  auto dup = c.Create(kConfigMaps, ns, ConfigMap("cm1", {{"k", "v"}}));
  CHECK(absl::IsAlreadyExists(dup.status()));
  CHECK(K8sReason(dup.status()) == "AlreadyExists");
  auto got = c.Get(kConfigMaps, ns, "cm1");
  REQUIRE(got.ok());
  CHECK((*got)["data"]["k"] == "v");
  auto missing = c.Get(kConfigMaps, ns, "nope");
  CHECK(absl::IsNotFound(missing.status()));
  CHECK(K8sReason(missing.status()) == "NotFound");
  json nameless = ConfigMap("", {});
  nameless["metadata"].erase("name");
  auto bad = c.Create(kConfigMaps, ns, nameless);  // 422 Invalid
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);

  // Update with the current RV works; a stale one is a conflict.
  json obj = *got;
  obj["data"]["k"] = "v2";
  auto updated = c.Update(kConfigMaps, ns, obj);
  REQUIRE(updated.ok());
  CHECK((*updated)["data"]["k"] == "v2");
  auto stale = c.Update(kConfigMaps, ns, obj);
  CHECK(IsConflict(stale.status()));
  CHECK(K8sReason(stale.status()) == "Conflict");

  // Delete preconditions: wrong uid -> conflict; right uid -> gone.
  auto wrong = c.Delete(kConfigMaps, ns, "cm1", {.precondition_uid = "not-the-uid"});
  CHECK(IsConflict(wrong.status()));
  REQUIRE(c.Delete(kConfigMaps, ns, "cm1",
                   {.propagation_policy = "Background",
                    .precondition_uid = (*updated)["metadata"]["uid"].get<std::string>()})
              .ok());
  CHECK(absl::IsNotFound(c.Get(kConfigMaps, ns, "cm1").status()));
  CHECK(absl::IsNotFound(c.Delete(kConfigMaps, ns, "cm1").status()));
}

void Paging(RestClient& c, const std::string& ns) {
  const RunLabel run;
  for (int i = 0; i < 7; ++i) {
    REQUIRE(c.Create(kConfigMaps, ns,
                     ConfigMap(absl::StrCat("page-", i), {{"i", std::to_string(i)}},
                               With(run, {{"set", i % 2 ? "odd" : "even"}})))
                .ok());
  }
  auto page = c.List(kConfigMaps, ns, {.label_selector = run.Selector(), .limit = 3});
  REQUIRE(page.ok());
  CHECK(page->items.size() == 3);
  CHECK(!page->continue_token.empty());
  auto all = c.ListAll(kConfigMaps, ns, {.label_selector = run.Selector(), .limit = 3});
  REQUIRE(all.ok());
  CHECK(all->items.size() == 7);
  CHECK(!all->resource_version.empty());
  auto odd = c.ListAll(kConfigMaps, ns, {.label_selector = run.Selector() + ",set=odd"});
  REQUIRE(odd.ok());
  CHECK(odd->items.size() == 3);
  auto by_name = c.ListAll(kConfigMaps, ns, {.field_selector = "metadata.name=page-4"});
  REQUIRE(by_name.ok());
  REQUIRE(by_name->items.size() == 1);
  CHECK(by_name->items[0]["data"]["i"] == "4");
}

void ConflictRetry(RestClient& c, const std::string& ns) {
  REQUIRE(c.Create(kConfigMaps, ns, ConfigMap("counter", {{"n", "0"}})).ok());
  // A competing writer bumps the object between our GET and PUT, once.
  int calls = 0;
  auto r = UpdateWithRetry(c, kConfigMaps, ns, "counter", [&](json& obj) -> absl::Status {
    if (calls++ == 0) {
      json other = obj;
      other["data"]["other"] = "x";
      auto s = c.Update(kConfigMaps, ns, other);
      if (!s.ok()) return s.status();
    }
    obj["data"]["n"] = std::to_string(std::stoi(obj["data"]["n"].get<std::string>()) + 1);
    return absl::OkStatus();
  });
  REQUIRE(r.ok());
  CHECK(calls == 2);
  CHECK((*r)["data"]["n"] == "1");
  CHECK((*r)["data"]["other"] == "x");
}

void PatchesAndApply(RestClient& c, const std::string& ns) {
  REQUIRE(c.Create(kConfigMaps, ns, ConfigMap("p", {{"a", "1"}})).ok());
  auto merged = c.Patch(
      kConfigMaps, ns, "p", PatchType::kMerge,
      {{"metadata", {{"annotations", {{"x.example.com/a", "1"}}}}}, {"data", {{"b", "2"}}}});
  REQUIRE(merged.ok());
  CHECK((*merged)["data"]["a"] == "1");
  CHECK((*merged)["data"]["b"] == "2");
  auto jp = c.Patch(kConfigMaps, ns, "p", PatchType::kJsonPatch,
                    json::array({{{"op", "remove"}, {"path", "/data/a"}},
                                 {{"op", "add"}, {"path", "/data/c"}, {"value", "3"}}}));
  REQUIRE(jp.ok());
  CHECK(!(*jp)["data"].contains("a"));
  CHECK((*jp)["data"]["c"] == "3");

  // Server-side apply: create, then a second manager conflicts unless forced.
  json applied = ConfigMap("ssa", {{"owned", "by-a"}});
  applied["metadata"].erase("labels");
  auto a1 = c.Apply(kConfigMaps, ns, applied, "manager-a");
  REQUIRE(a1.ok());
  CHECK((*a1)["data"]["owned"] == "by-a");
  json other = ConfigMap("ssa", {{"owned", "by-b"}});
  other["metadata"].erase("labels");
  auto conflict = c.Apply(kConfigMaps, ns, other, "manager-b");
  CHECK(IsConflict(conflict.status()));
  auto forced = c.Apply(kConfigMaps, ns, other, "manager-b", /*force=*/true);
  REQUIRE(forced.ok());
  CHECK((*forced)["data"]["owned"] == "by-b");
  // Dropping a field from manager-a's next apply removes only what it solely owns.
  json a2 = ConfigMap("ssa", {{"extra", "1"}});
  a2["metadata"].erase("labels");
  REQUIRE(c.Apply(kConfigMaps, ns, a2, "manager-a").ok());
  a2["data"] = json::object();
  auto a3 = c.Apply(kConfigMaps, ns, a2, "manager-a");
  REQUIRE(a3.ok());
  CHECK(!(*a3)["data"].contains("extra"));
  CHECK((*a3)["data"]["owned"] == "by-b");
  CHECK(c.Apply(kConfigMaps, ns, a2, "").status().code() == absl::StatusCode::kInvalidArgument);
}

namespace {

// Pods the suite creates name a scheduler that does not exist: on a real cluster nothing binds
// them, so nobody else writes them between the suite's own requests (the default scheduler's
// binding made a write from the create reply a 409, 4 runs in 5).
json UnscheduledPod(const std::string& name) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}}},
      {"spec",
       {{"schedulerName", kNoScheduler},
        {"containers", json::array({{{"name", "c"}, {"image", "registry.k8s.io/pause:3.9"}}})}}}};
}

// Adds (or replaces) a condition of `type` in obj.status.conditions.
void SetTestCondition(json& obj, const std::string& type, const std::string& status) {
  json& conditions = obj["status"]["conditions"];
  if (!conditions.is_array()) conditions = json::array();
  for (auto it = conditions.begin(); it != conditions.end();) {
    it = (*it)["type"] == type ? conditions.erase(it) : it + 1;
  }
  conditions.push_back(
      {{"type", type}, {"status", status}, {"lastTransitionTime", "2024-01-01T00:00:00Z"}});
}

bool HasCondition(const json& obj, const std::string& type, const std::string& status) {
  for (const auto& cond : obj["status"].value("conditions", json::array())) {
    if (cond["type"] == type && cond["status"] == status) return true;
  }
  return false;
}

}  // namespace

void StatusSubresource(RestClient& c, const std::string& ns) {
  auto created = c.Create(kPods, ns, UnscheduledPod("st"));
  REQUIRE(created.ok());
  CHECK((*created)["spec"]["schedulerName"] == kNoScheduler);
  json upd = *created;
  SetTestCondition(upd, "neuron.amazonaws.com/Test", "True");
  upd["metadata"]["labels"]["ignored"] = "yes";  // status writes ignore metadata changes
  // Straight from the create reply: nobody binds the pod, so its resourceVersion still holds.
  auto st = c.UpdateStatus(kPods, ns, upd);
  REQUIRE(st.ok());
  CHECK(HasCondition(*st, "neuron.amazonaws.com/Test", "True"));
  CHECK((*st)["spec"].value("nodeName", "").empty());

  // Another writer (as a scheduler or kubelet would be) changes the status in between: the
  // write from the stale copy is a 409, and a re-read and retry keeps both changes.
  json other = *st;
  SetTestCondition(other, "neuron.amazonaws.com/Other", "True");
  REQUIRE(c.UpdateStatus(kPods, ns, other).ok());
  json stale = *st;
  SetTestCondition(stale, "neuron.amazonaws.com/Test", "False");
  CHECK(IsConflict(c.UpdateStatus(kPods, ns, stale).status()));
  auto retried = UpdateWithRetry(
      c, kPods, ns, "st",
      [](json& obj) {
        SetTestCondition(obj, "neuron.amazonaws.com/Test", "False");
        return absl::OkStatus();
      },
      "status");
  REQUIRE(retried.ok());
  CHECK(HasCondition(*retried, "neuron.amazonaws.com/Test", "False"));
  CHECK(HasCondition(*retried, "neuron.amazonaws.com/Other", "True"));

  auto patched =
      c.Patch(kPods, ns, "st", PatchType::kMerge,
              {{"metadata", {{"annotations", {{"neuron.amazonaws.com/cores", "0-1"}}}}}});
  REQUIRE(patched.ok());
  CHECK((*patched)["metadata"]["annotations"]["neuron.amazonaws.com/cores"] == "0-1");
  REQUIRE(c.Delete(kPods, ns, "st", {.grace_period_seconds = 0}).ok());
}

void WatchResume(RestClient& c, const std::string& ns) {
  // Only our own objects: a real cluster publishes kube-root-ca.crt (and OpenShift
  // openshift-service-ca.crt) into a new namespace, possibly after our list.
  const RunLabel run;
  auto list = c.List(kConfigMaps, ns, {.label_selector = run.Selector()});
  REQUIRE(list.ok());
  absl::Mutex mu;
  std::vector<std::string> seen;  // "TYPE name"
  std::string last_rv;
  StreamCanceller cancel;
  auto on_event = [&](WatchEvent& ev) {
    absl::MutexLock l(&mu);
    if (ev.type != WatchEventType::kBookmark) {
      seen.push_back(
          absl::StrCat(WatchEventTypeName(ev.type), " ", ev.object["metadata"].value("name", "")));
    }
    last_rv = ev.object["metadata"].value("resourceVersion", last_rv);
    return true;
  };
  absl::Status result;
  std::thread t([&] {
    result = c.Watch(kConfigMaps, ns,
                     {.label_selector = run.Selector(), .resource_version = list->resource_version},
                     on_event, &cancel);
  });
  REQUIRE(c.Create(kConfigMaps, ns, ConfigMap("w1", {}, With(run))).ok());
  REQUIRE(c.Patch(kConfigMaps, ns, "w1", PatchType::kMerge, {{"data", {{"x", "1"}}}}).ok());
  {
    absl::MutexLock l(&mu);
    auto two = [&] { return seen.size() >= 2; };
    REQUIRE(mu.AwaitWithTimeout(absl::Condition(&two), absl::Seconds(20)));
  }
  cancel.Cancel();  // stop promptly
  t.join();
  CHECK(result.ok());
  // Changes made while no watch is open are delivered on resume from the last RV.
  REQUIRE(c.Delete(kConfigMaps, ns, "w1").ok());
  REQUIRE(c.Create(kConfigMaps, ns, ConfigMap("w2", {}, With(run))).ok());
  std::string resume;
  {
    absl::MutexLock l(&mu);
    resume = last_rv;
  }
  std::vector<std::string> more;
  StreamCanceller cancel2;
  auto st = c.Watch(
      kConfigMaps, ns,
      {.label_selector = run.Selector(), .resource_version = resume, .timeout_seconds = 30},
      [&](WatchEvent& ev) {
        if (ev.type != WatchEventType::kBookmark) {
          more.push_back(absl::StrCat(WatchEventTypeName(ev.type), " ",
                                      ev.object["metadata"].value("name", "")));
        }
        return more.size() < 2;
      },
      &cancel2);
  CHECK(st.ok());
  CHECK(seen == std::vector<std::string>{"ADDED w1", "MODIFIED w1"});
  CHECK(more == std::vector<std::string>{"DELETED w1", "ADDED w2"});
}

void InformerBasics(RestClient& c, const std::string& ns) {
  // Selects our own objects: the namespace also holds what the cluster put there.
  const RunLabel run;
  REQUIRE(c.Create(kConfigMaps, ns, ConfigMap("i1", {{"k", "v"}}, With(run, {{"app", "x"}}))).ok());
  Informer inf(c, kConfigMaps, ns, {.label_selector = run.Selector()});
  inf.SetFields(WithoutBookkeeping());
  REQUIRE(inf.AddIndexer("app",
                         [](const json& o) -> std::vector<std::string> {
                           const auto& l = o["metadata"].value("labels", json::object());
                           if (!l.contains("app")) return {};
                           return {l["app"].get<std::string>()};
                         })
              .ok());
  absl::Mutex mu;
  std::vector<std::string> log;
  inf.AddEventHandler({.on_add =
                           [&](const ObjectPtr& o) {
                             absl::MutexLock l(&mu);
                             log.push_back("add " + (*o)["metadata"]["name"].get<std::string>());
                           },
                       .on_update =
                           [&](const ObjectPtr&, const ObjectPtr& n) {
                             absl::MutexLock l(&mu);
                             log.push_back("update " + (*n)["metadata"]["name"].get<std::string>());
                           },
                       .on_delete =
                           [&](const ObjectPtr& o) {
                             absl::MutexLock l(&mu);
                             log.push_back("delete " + (*o)["metadata"]["name"].get<std::string>());
                           }});
  inf.Start();
  REQUIRE(inf.WaitForSync(absl::Seconds(20)));
  CHECK(inf.HasSynced());
  REQUIRE(inf.store().Get(ns + "/i1"));
  CHECK(!(*inf.store().Get(ns + "/i1"))["metadata"].contains("managedFields"));
  REQUIRE(c.Create(kConfigMaps, ns, ConfigMap("i2", {}, With(run, {{"app", "x"}}))).ok());
  REQUIRE(c.Patch(kConfigMaps, ns, "i1", PatchType::kMerge, {{"data", {{"k", "v2"}}}}).ok());
  REQUIRE(c.Delete(kConfigMaps, ns, "i2").ok());
  {
    absl::MutexLock l(&mu);
    auto done = [&] { return log.size() >= 4; };
    REQUIRE(mu.AwaitWithTimeout(absl::Condition(&done), absl::Seconds(20)));
    CHECK(log == std::vector<std::string>{"add i1", "add i2", "update i1", "delete i2"});
  }
  CHECK(inf.store().ByIndex("app", "x").size() == 1);
  CHECK((*inf.store().Get(ns + "/i1"))["data"]["k"] == "v2");
  const absl::Time t0 = absl::Now();
  inf.Stop();
  CHECK(absl::Now() - t0 < absl::Seconds(5));  // prompt, not a watch timeout
}

void DiscoveryBasics(RestClient& c) {
  Discovery d(c);
  auto pods = d.Find("", "v1", "pods");
  REQUIRE(pods.ok());
  REQUIRE(pods->has_value());
  CHECK((*pods)->namespaced);
  auto nodes = d.Find("", "v1", "nodes");
  REQUIRE(nodes.ok());
  REQUIRE(nodes->has_value());
  CHECK(!(*nodes)->namespaced);
  CHECK(*d.IsServed("coordination.k8s.io", "v1", "leases"));
  CHECK(!*d.IsServed("nonexistent.example.com", "v1", "widgets"));
  auto apps = d.GroupVersions("apps");
  REQUIRE(apps.ok());
  REQUIRE(!apps->empty());
  CHECK(apps->front() == "v1");
}

void EventsAggregate(RestClient& c, const std::string& ns) {
  auto cm = c.Create(kConfigMaps, ns, ConfigMap("ev", {}));
  REQUIRE(cm.ok());
  EventRecorder rec(c, "neuron-test", "host-1");
  REQUIRE(rec.Event(*cm, kEventWarning, "Broken", "device 3 failed").ok());
  REQUIRE(rec.Event(*cm, kEventWarning, "Broken", "device 3 failed").ok());
  REQUIRE(rec.Event(*cm, kEventNormal, "Fixed", "ok").ok());
  auto list = c.ListAll(resources::kEvents, ns, {.field_selector = "involvedObject.name=ev"});
  REQUIRE(list.ok());
  REQUIRE(list->items.size() == 2);
  for (const auto& e : list->items) {
    if (e["reason"] == "Broken") {
      CHECK(e["count"] == 2);
      CHECK(e["involvedObject"]["kind"] == "ConfigMap");
      CHECK(e["source"]["component"] == "neuron-test");
    } else {
      CHECK(e["count"] == 1);
    }
  }
  // Different events in one clock tick get distinct names (client-go's <name>.<nanos> would
  // collide): both are recorded.
  fakes::FakeClock still;
  EventRecorder frozen(c, "neuron-test", "", &still);
  REQUIRE(frozen.Event(*cm, kEventNormal, "Step", "one").ok());
  REQUIRE(frozen.Event(*cm, kEventNormal, "Step", "two").ok());
  REQUIRE(frozen.Event(*cm, kEventNormal, "Step", "three").ok());
  auto steps = c.ListAll(resources::kEvents, ns, {.field_selector = "involvedObject.name=ev"});
  REQUIRE(steps.ok());
  CHECK(steps->items.size() == 5);
}

}  // namespace neuron::k8s::suite
