// File: tests/fakes/apiserver/fake_apiserver_patch_test.cc
// Patch types, server-side apply ownership, and CRD registration of the fake apiserver.
#include "catch2/catch.hpp"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/fakes/apiserver/test_client.h"

namespace neuron::fakes {
namespace {

using nlohmann::json;
using testing::Call;

constexpr char kDeploys[] = "/apis/apps/v1/namespaces/ns/deployments";

json Deployment() {
  return json::parse(R"({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
    "spec": {"replicas": 1, "template": {"spec": {"containers": [
      {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}]},
      {"name": "b", "image": "b:1"}]}}}})");
}

TEST_CASE("merge, json and strategic merge patches", "[apiserver][patch]") {
  FakeApiServer fake;
  REQUIRE(fake.Start().ok());
  const int port = fake.port();
  REQUIRE(Call(port, "POST", kDeploys, Deployment()).status == 201);
  const std::string d = std::string(kDeploys) + "/d";

  auto merge = Call(port, "PATCH", d, json{{"spec", {{"replicas", 3}, {"paused", true}}}},
                    "application/merge-patch+json");
  REQUIRE(merge.status == 200);
  CHECK(merge.body["spec"]["replicas"] == 3);
  CHECK(merge.body["metadata"]["generation"] == 2);
  auto unset =
      Call(port, "PATCH", d, json{{"spec", {{"paused", nullptr}}}}, "application/merge-patch+json");
  CHECK(!unset.body["spec"].contains("paused"));

  auto jp = Call(port, "PATCH", d,
                 R"([{"op":"test","path":"/spec/replicas","value":3},
                     {"op":"replace","path":"/spec/replicas","value":5}])",
                 "application/json-patch+json");
  REQUIRE(jp.status == 200);
  CHECK(jp.body["spec"]["replicas"] == 5);
  auto failed = Call(port, "PATCH", d, R"([{"op":"test","path":"/spec/replicas","value":1}])",
                     "application/json-patch+json");
  CHECK(failed.status == 422);
  CHECK(fake.Get(d)["spec"]["replicas"] == 5);

  json smp = {{"spec",
               {{"template",
                 {{"spec",
                   {{"containers",
                     {{{"name", "b"}, {"image", "b:2"}},
                      {{"name", "a"}, {"env", {{{"name", "Y"}, {"value", "2"}}}}}}}}}}}}}};
  auto sm = Call(port, "PATCH", d, smp, "application/strategic-merge-patch+json");
  REQUIRE(sm.status == 200);
  const json& cs = sm.body["spec"]["template"]["spec"]["containers"];
  REQUIRE(cs.size() == 2);
  CHECK(cs[0]["name"] == "a");
  CHECK(cs[0]["image"] == "a:1");
  CHECK(cs[0]["env"].size() == 2);
  CHECK(cs[1]["image"] == "b:2");
  json del = {
      {"spec",
       {{"template", {{"spec", {{"containers", {{{"name", "b"}, {"$patch", "delete"}}}}}}}}}}};
  auto sd = Call(port, "PATCH", d, del, "application/strategic-merge-patch+json");
  CHECK(sd.body["spec"]["template"]["spec"]["containers"].size() == 1);
  CHECK(Call(port, "PATCH", d, "{}", "text/plain").status == 415);
  CHECK(Call(port, "PATCH", std::string(kDeploys) + "/nope", "{}", "application/merge-patch+json")
            .status == 404);
}

TEST_CASE("server-side apply: create, ownership, conflicts, force, removal", "[apiserver][patch]") {
  FakeApiServer fake;
  REQUIRE(fake.Start().ok());
  const int port = fake.port();
  const std::string cm = "/api/v1/namespaces/ns/configmaps/cfg";
  const std::string yaml = R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
data:
  a: "1"
  b: "2"
)";
  CHECK(Call(port, "PATCH", cm, yaml, "application/apply-patch+yaml").status == 422);
  auto created =
      Call(port, "PATCH", cm + "?fieldManager=alice", yaml, "application/apply-patch+yaml");
  REQUIRE(created.status == 201);
  CHECK(created.body["data"] == json{{"a", "1"}, {"b", "2"}});
  const json& mf = created.body["metadata"]["managedFields"];
  REQUIRE(mf.size() == 1);
  CHECK(mf[0]["manager"] == "alice");
  CHECK(mf[0]["operation"] == "Apply");
  CHECK(mf[0]["fieldsV1"]["f:data"].contains("f:a"));

  json bob = {{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata", {{"name", "cfg"}}},
              {"data", {{"a", "9"}, {"c", "3"}}}};
  auto conflict =
      Call(port, "PATCH", cm + "?fieldManager=bob", bob, "application/apply-patch+yaml");
  REQUIRE(conflict.status == 409);
  CHECK(conflict.body["reason"] == "Conflict");
  CHECK(conflict.body["details"]["causes"][0]["field"] == ".data.a");
  CHECK(fake.Get(cm)["data"]["a"] == "1");
  json same = bob;
  same["data"]["a"] = "1";
  REQUIRE(
      Call(port, "PATCH", cm + "?fieldManager=bob", same, "application/apply-patch+yaml").status ==
      200);  // same value: shared ownership, no conflict
  auto forced =
      Call(port, "PATCH", cm + "?fieldManager=bob&force=true", bob, "application/apply-patch+yaml");
  REQUIRE(forced.status == 200);
  CHECK(forced.body["data"] == json{{"a", "9"}, {"b", "2"}, {"c", "3"}});

  // alice drops b (hers alone: removed) and a (now bob's: kept).
  json alice2 = {{"apiVersion", "v1"},
                 {"kind", "ConfigMap"},
                 {"metadata", {{"name", "cfg"}}},
                 {"data", json::object()}};
  auto dropped =
      Call(port, "PATCH", cm + "?fieldManager=alice", alice2, "application/apply-patch+yaml");
  REQUIRE(dropped.status == 200);
  CHECK(dropped.body["data"] == json{{"a", "9"}, {"c", "3"}});
  // A non-apply update takes ownership without conflict.
  auto upd = Call(port, "PATCH", cm + "?fieldManager=carol", json{{"data", {{"c", "4"}}}},
                  "application/merge-patch+json");
  REQUIRE(upd.status == 200);
  auto again = Call(port, "PATCH", cm + "?fieldManager=bob", bob, "application/apply-patch+yaml");
  CHECK(again.status == 409);
  CHECK(again.body["details"]["causes"][0]["field"] == ".data.c");
  CHECK(Call(port, "PATCH", cm + "?force=true", json{{"data", {{"c", "4"}}}},
             "application/merge-patch+json")
            .status == 422);
}

TEST_CASE("CRDs register types, serve them, show in discovery, and unregister",
          "[apiserver][crd]") {
  FakeApiServer fake;
  REQUIRE(fake.Start().ok());
  const int port = fake.port();
  json crd = {{"apiVersion", "apiextensions.k8s.io/v1"},
              {"kind", "CustomResourceDefinition"},
              {"metadata", {{"name", "widgets.example.com"}}},
              {"spec",
               {{"group", "example.com"},
                {"scope", "Namespaced"},
                {"names",
                 {{"plural", "widgets"},
                  {"singular", "widget"},
                  {"kind", "Widget"},
                  {"shortNames", {"wd"}}}},
                {"versions",
                 {{{"name", "v1"},
                   {"served", true},
                   {"storage", true},
                   {"subresources", {{"status", json::object()}}}}}}}}};
  const std::string crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
  const std::string widgets = "/apis/example.com/v1/namespaces/ns/widgets";
  CHECK(Call(port, "GET", widgets).status == 404);
  auto c = Call(port, "POST", crds, crd);
  REQUIRE(c.status == 201);
  CHECK(c.body["status"]["conditions"][1]["type"] == "Established");
  auto disc = Call(port, "GET", "/apis/example.com/v1");
  REQUIRE(disc.status == 200);
  CHECK(disc.body["resources"][0]["name"] == "widgets");
  CHECK(disc.body["resources"][0]["shortNames"] == json{"wd"});
  CHECK(disc.body["resources"][1]["name"] == "widgets/status");
  json w = {{"apiVersion", "example.com/v1"},
            {"kind", "Widget"},
            {"metadata", {{"name", "w1"}}},
            {"spec", {{"size", 1}}},
            {"status", {{"ready", true}}}};
  auto cw = Call(port, "POST", widgets, w);
  REQUIRE(cw.status == 201);
  CHECK(!cw.body.contains("status"));  // dropped on create with a status subresource
  auto st = Call(port, "PATCH", widgets + "/w1/status", json{{"status", {{"ready", true}}}},
                 "application/merge-patch+json");
  CHECK(st.body["status"]["ready"] == true);
  CHECK(
      Call(port, "PATCH", widgets + "/w1", "{}", "application/strategic-merge-patch+json").status ==
      415);
  bool listed = false;
  const json groups = Call(port, "GET", "/apis").body["groups"];
  for (const auto& g : groups) {
    listed = listed || g["name"] == "example.com";
  }
  CHECK(listed);
  REQUIRE(Call(port, "DELETE", crds + "/widgets.example.com").status == 200);
  CHECK(Call(port, "GET", widgets).status == 404);
  CHECK(Call(port, "GET", "/apis/example.com/v1").status == 404);
  json bad = crd;
  bad["metadata"]["name"] = "wrong";
  CHECK(Call(port, "POST", crds, bad).status == 422);
}

}  // namespace
}  // namespace neuron::fakes
