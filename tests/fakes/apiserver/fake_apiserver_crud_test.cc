// File: tests/fakes/apiserver/fake_apiserver_crud_test.cc
// CRUD, concurrency, generation, status subresource, finalizers, GC, selectors, paging, binding,
// CRDs, discovery and error injection of the fake apiserver, over real HTTP.
#include "catch2/catch.hpp"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/fakes/apiserver/test_client.h"

namespace neuron::fakes {
namespace {

using nlohmann::json;
using testing::Call;

constexpr char kPods[] = "/api/v1/namespaces/ns1/pods";

json Pod(const std::string& name, json labels = json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"spec", {{"containers", {{{"name", "c"}, {"image", "img:1"}}}}}}};
}

struct Server {
  Server() { REQUIRE(fake.Start().ok()); }
  FakeApiServer fake;
  int port() const { return fake.port(); }
};

TEST_CASE("create, get, update, delete with resourceVersion and metav1.Status errors",
          "[apiserver]") {
  Server s;
  auto created = Call(s.port(), "POST", kPods, Pod("p1"));
  REQUIRE(created.status == 201);
  const json& md = created.body["metadata"];
  CHECK(md["uid"].get<std::string>().size() == 36);
  CHECK(md["namespace"] == "ns1");
  CHECK(md["generation"] == 1);
  CHECK(!md["creationTimestamp"].get<std::string>().empty());
  CHECK(std::stoll(md["resourceVersion"].get<std::string>()) == s.fake.ResourceVersion());

  auto dup = Call(s.port(), "POST", kPods, Pod("p1"));
  CHECK(dup.status == 409);
  CHECK(dup.body["reason"] == "AlreadyExists");
  CHECK(dup.body["kind"] == "Status");

  auto missing = Call(s.port(), "GET", std::string(kPods) + "/nope");
  CHECK(missing.status == 404);
  CHECK(missing.body["reason"] == "NotFound");
  CHECK(missing.body["details"]["name"] == "nope");
  CHECK(missing.body["details"]["kind"] == "pods");
  CHECK(missing.body["code"] == 404);

  json upd = created.body;
  upd["metadata"]["labels"]["x"] = "y";
  auto ok = Call(s.port(), "PUT", std::string(kPods) + "/p1", upd);
  REQUIRE(ok.status == 200);
  CHECK(ok.body["metadata"]["labels"]["x"] == "y");
  CHECK(ok.body["metadata"]["generation"] == 1);  // metadata-only change
  auto stale = Call(s.port(), "PUT", std::string(kPods) + "/p1", upd);
  CHECK(stale.status == 409);
  CHECK(stale.body["reason"] == "Conflict");

  json spec_change = ok.body;
  spec_change["spec"]["containers"][0]["image"] = "img:2";
  auto bumped = Call(s.port(), "PUT", std::string(kPods) + "/p1", spec_change);
  REQUIRE(bumped.status == 200);
  CHECK(bumped.body["metadata"]["generation"] == 2);

  auto stale_patch = Call(s.port(), "PATCH", std::string(kPods) + "/p1",
                          json{{"metadata", {{"resourceVersion", md["resourceVersion"]}}}},
                          "application/merge-patch+json");
  CHECK(stale_patch.status == 409);

  CHECK(Call(s.port(), "DELETE", std::string(kPods) + "/p1").status == 200);
  CHECK(s.fake.Get(std::string(kPods) + "/p1").is_null());
  CHECK(Call(s.port(), "DELETE", std::string(kPods) + "/p1").status == 404);
}

TEST_CASE("generateName and namespace mismatch", "[apiserver]") {
  Server s;
  json p = Pod("");
  p["metadata"].erase("name");
  p["metadata"]["generateName"] = "web-";
  auto r = Call(s.port(), "POST", kPods, p);
  REQUIRE(r.status == 201);
  CHECK(r.body["metadata"]["name"].get<std::string>().rfind("web-", 0) == 0);
  CHECK(r.body["metadata"]["name"].get<std::string>().size() == 9);
  json other = Pod("q");
  other["metadata"]["namespace"] = "elsewhere";
  CHECK(Call(s.port(), "POST", kPods, other).status == 400);
}

TEST_CASE("names that are not DNS-1123 subdomains are rejected with 422", "[apiserver]") {
  Server s;
  const std::vector<std::string> bad_names = {"Bad_Name!", "UPPER", "-leading", "trailing.",
                                              std::string(254, 'a')};
  for (const std::string& bad : bad_names) {
    auto r = Call(s.port(), "POST", kPods, Pod(bad));
    CHECK(r.status == 422);
    CHECK(r.body["reason"] == "Invalid");
  }
  CHECK(Call(s.port(), "POST", kPods, Pod("ok-name.v1")).status == 201);
}

TEST_CASE("status subresource isolates .status from the main resource", "[apiserver]") {
  Server s;
  REQUIRE(Call(s.port(), "POST", kPods, Pod("p")).status == 201);
  json obj = s.fake.Get(std::string(kPods) + "/p");
  obj["status"] = {{"phase", "Running"}};
  auto st = Call(s.port(), "PUT", std::string(kPods) + "/p/status", obj);
  REQUIRE(st.status == 200);
  CHECK(st.body["status"]["phase"] == "Running");
  json main = st.body;
  main["status"]["phase"] = "Failed";
  main["spec"]["containers"][0]["image"] = "img:9";
  auto m = Call(s.port(), "PUT", std::string(kPods) + "/p", main);
  REQUIRE(m.status == 200);
  CHECK(m.body["status"]["phase"] == "Running");
  CHECK(m.body["spec"]["containers"][0]["image"] == "img:9");
  auto sp = Call(s.port(), "PATCH", std::string(kPods) + "/p/status",
                 json{{"spec", {{"nodeName", "n1"}}}, {"status", {{"phase", "Succeeded"}}}},
                 "application/merge-patch+json");
  REQUIRE(sp.status == 200);
  CHECK(sp.body["status"]["phase"] == "Succeeded");
  CHECK(!sp.body["spec"].contains("nodeName"));
  CHECK(sp.body["metadata"]["generation"] == 2);  // status writes never bump it
}

TEST_CASE("finalizers hold deletion until the last one is removed", "[apiserver]") {
  Server s;
  json p = Pod("f");
  p["metadata"]["finalizers"] = {"example.com/a", "example.com/b"};
  REQUIRE(Call(s.port(), "POST", kPods, p).status == 201);
  auto del = Call(s.port(), "DELETE", std::string(kPods) + "/f");
  REQUIRE(del.status == 200);
  CHECK(del.body["metadata"].contains("deletionTimestamp"));
  CHECK(del.body["metadata"]["deletionGracePeriodSeconds"] == 0);
  REQUIRE(!s.fake.Get(std::string(kPods) + "/f").is_null());
  auto one =
      Call(s.port(), "PATCH", std::string(kPods) + "/f",
           json{{"metadata", {{"finalizers", {"example.com/b"}}}}}, "application/merge-patch+json");
  REQUIRE(one.status == 200);
  REQUIRE(!s.fake.Get(std::string(kPods) + "/f").is_null());
  auto last =
      Call(s.port(), "PATCH", std::string(kPods) + "/f",
           R"([{"op":"remove","path":"/metadata/finalizers"}])", "application/json-patch+json");
  REQUIRE(last.status == 200);
  CHECK(s.fake.Get(std::string(kPods) + "/f").is_null());
}

TEST_CASE("ownerReference garbage collection: background and orphan", "[apiserver]") {
  Server s;
  const std::string cms = "/api/v1/namespaces/ns1/configmaps";
  auto owner = Call(s.port(), "POST", cms, json{{"metadata", {{"name", "owner"}}}});
  REQUIRE(owner.status == 201);
  json ref = {{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"name", "owner"},
              {"uid", owner.body["metadata"]["uid"]}};
  for (const char* n : {"d1", "d2"}) {
    REQUIRE(Call(s.port(), "POST", cms,
                 json{{"metadata", {{"name", n}, {"ownerReferences", json::array({ref})}}}})
                .status == 201);
  }
  REQUIRE(Call(s.port(), "DELETE", cms + "/owner").status == 200);
  CHECK(s.fake.Get(cms + "/d1").is_null());
  CHECK(s.fake.Get(cms + "/d2").is_null());

  auto owner2 = Call(s.port(), "POST", cms, json{{"metadata", {{"name", "owner2"}}}});
  ref["uid"] = owner2.body["metadata"]["uid"];
  ref["name"] = "owner2";
  REQUIRE(Call(s.port(), "POST", cms,
               json{{"metadata", {{"name", "d3"}, {"ownerReferences", json::array({ref})}}}})
              .status == 201);
  REQUIRE(Call(s.port(), "DELETE", cms + "/owner2", json{{"propagationPolicy", "Orphan"}}).status ==
          200);
  json d3 = s.fake.Get(cms + "/d3");
  REQUIRE(!d3.is_null());
  CHECK(!d3["metadata"].contains("ownerReferences"));
}

TEST_CASE("label and field selectors, paging and expired continue tokens", "[apiserver]") {
  Server s;
  for (int i = 0; i < 5; ++i) {
    json p =
        Pod("p" + std::to_string(i), {{"app", i % 2 ? "odd" : "even"}, {"i", std::to_string(i)}});
    if (i == 3) p["spec"]["nodeName"] = "n1";
    REQUIRE(Call(s.port(), "POST", kPods, p).status == 201);
  }
  auto names = [](const json& list) {
    std::vector<std::string> out;
    for (const auto& it : list["items"]) out.push_back(it["metadata"]["name"]);
    return out;
  };
  using V = std::vector<std::string>;
  CHECK(names(Call(s.port(), "GET", std::string(kPods) + "?labelSelector=app%3Dodd").body) ==
        V{"p1", "p3"});
  CHECK(names(Call(s.port(), "GET", std::string(kPods) + "?labelSelector=app!%3Dodd").body) ==
        V{"p0", "p2", "p4"});
  CHECK(names(Call(s.port(), "GET", "/api/v1/pods?labelSelector=i%20in%20(1,4),app").body) ==
        V{"p1", "p4"});
  CHECK(names(Call(s.port(), "GET", std::string(kPods) + "?labelSelector=i%20notin%20(0,1,2)")
                  .body) == V{"p3", "p4"});
  CHECK(names(Call(s.port(), "GET", std::string(kPods) + "?labelSelector=!nolabel,app%3D%3Deven")
                  .body) == V{"p0", "p2", "p4"});
  CHECK(
      names(Call(s.port(), "GET", std::string(kPods) + "?fieldSelector=spec.nodeName%3Dn1").body) ==
      V{"p3"});
  CHECK(names(Call(s.port(), "GET",
                   std::string(kPods) + "?fieldSelector=spec.nodeName%3D,metadata.name!%3Dp0")
                  .body) == V{"p1", "p2", "p4"});
  auto bad = Call(s.port(), "GET", std::string(kPods) + "?fieldSelector=spec.bogus%3Dx");
  CHECK(bad.status == 400);
  CHECK(bad.body["message"] == "field label not supported: spec.bogus");

  auto page1 = Call(s.port(), "GET", std::string(kPods) + "?limit=2");
  REQUIRE(page1.status == 200);
  CHECK(names(page1.body) == V{"p0", "p1"});
  CHECK(page1.body["metadata"]["remainingItemCount"] == 3);
  const std::string tok = page1.body["metadata"]["continue"];
  auto page2 = Call(s.port(), "GET", std::string(kPods) + "?limit=2&continue=" + tok);
  CHECK(names(page2.body) == V{"p2", "p3"});
  CHECK(page2.body["metadata"]["remainingItemCount"] == 1);
  auto page3 = Call(s.port(), "GET",
                    std::string(kPods) + "?limit=2&continue=" +
                        page2.body["metadata"]["continue"].get<std::string>());
  CHECK(names(page3.body) == V{"p4"});
  CHECK(!page3.body["metadata"].contains("continue"));
  REQUIRE(Call(s.port(), "POST", kPods, Pod("p9")).status == 201);
  s.fake.Compact();
  auto expired = Call(s.port(), "GET", std::string(kPods) + "?limit=2&continue=" + tok);
  CHECK(expired.status == 410);
  CHECK(expired.body["reason"] == "Expired");
}

TEST_CASE("pods/binding sets nodeName once", "[apiserver]") {
  Server s;
  REQUIRE(Call(s.port(), "POST", kPods, Pod("b")).status == 201);
  json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", "b"}}},
                  {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "n1"}}}};
  CHECK(Call(s.port(), "POST", std::string(kPods) + "/b/binding", binding).status == 201);
  CHECK(s.fake.Get(std::string(kPods) + "/b")["spec"]["nodeName"] == "n1");
  auto again = Call(s.port(), "POST", std::string(kPods) + "/b/binding", binding);
  CHECK(again.status == 409);
  CHECK(again.body["reason"] == "Conflict");
}

TEST_CASE("pods/binding merges annotations and honours the UID precondition", "[apiserver]") {
  Server s;
  json pod = Pod("m");
  pod["metadata"]["annotations"] = {{"keep", "me"}, {"over", "old"}};
  REQUIRE(Call(s.port(), "POST", kPods, pod).status == 201);
  const std::string uid = s.fake.Get(std::string(kPods) + "/m")["metadata"]["uid"];
  json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", "m"}, {"uid", "not-" + uid}}},
                  {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "n1"}}}};
  auto stale = Call(s.port(), "POST", std::string(kPods) + "/m/binding", binding);
  CHECK(stale.status == 409);
  CHECK(stale.body["message"].get<std::string>().find("UID in precondition") != std::string::npos);
  CHECK(s.fake.Get(std::string(kPods) + "/m")["spec"].value("nodeName", "") == "");

  binding["metadata"]["uid"] = uid;
  binding["metadata"]["annotations"] = {{"over", "new"}, {"added", "1"}};
  CHECK(Call(s.port(), "POST", std::string(kPods) + "/m/binding", binding).status == 201);
  json stored = s.fake.Get(std::string(kPods) + "/m");
  CHECK(stored["spec"]["nodeName"] == "n1");
  CHECK(stored["metadata"]["annotations"] == json{{"keep", "me"}, {"over", "new"}, {"added", "1"}});

  binding["metadata"]["name"] = "other";
  CHECK(Call(s.port(), "POST", std::string(kPods) + "/m/binding", binding).status == 400);
  binding["metadata"]["name"] = "m";
  binding["target"]["kind"] = "Pod";
  CHECK(Call(s.port(), "POST", std::string(kPods) + "/m/binding", binding).status == 422);
}

TEST_CASE("pods/binding refuses gated pods", "[apiserver]") {
  Server s;
  json pod = Pod("g");
  pod["spec"]["schedulingGates"] = json::array({{{"name", "example.com/wait"}}});
  REQUIRE(Call(s.port(), "POST", kPods, pod).status == 201);
  json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", "g"}}},
                  {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "n1"}}}};
  auto r = Call(s.port(), "POST", std::string(kPods) + "/g/binding", binding);
  CHECK(r.status == 409);
  CHECK(r.body["message"].get<std::string>().find("schedulingGates") != std::string::npos);
}

TEST_CASE("error injection and request counting", "[apiserver]") {
  Server s;
  s.fake.InjectError("GET", "/pods", 429, 2, 3);
  auto r1 = Call(s.port(), "GET", kPods);
  CHECK(r1.status == 429);
  CHECK(r1.body["reason"] == "TooManyRequests");
  CHECK(r1.body["details"]["retryAfterSeconds"] == 3);
  CHECK(Call(s.port(), "POST", kPods, Pod("x")).status == 201);  // other method unaffected
  CHECK(Call(s.port(), "GET", kPods).status == 429);
  CHECK(Call(s.port(), "GET", kPods).status == 200);
  CHECK(s.fake.RequestCount("GET", "/pods") == 3);
  CHECK(s.fake.RequestCount("", "/pods") == 4);
  httplib::Client cli("127.0.0.1", s.port());
  s.fake.InjectError("", "/configmaps", 503, 1, 7);
  auto raw = cli.Get("/api/v1/namespaces/a/configmaps");
  REQUIRE(raw);
  CHECK(raw->status == 503);
  CHECK(raw->get_header_value("Retry-After") == "7");
}

TEST_CASE("discovery and non-resource endpoints", "[apiserver]") {
  Server s;
  auto api = Call(s.port(), "GET", "/api");
  CHECK(api.body["versions"] == json{"v1"});
  auto v1 = Call(s.port(), "GET", "/api/v1");
  bool pods = false, pod_status = false, binding = false;
  for (const auto& r : v1.body["resources"]) {
    if (r["name"] == "pods") pods = r["namespaced"] == true && r["shortNames"] == json{"po"};
    if (r["name"] == "pods/status") pod_status = true;
    if (r["name"] == "pods/binding") binding = true;
  }
  CHECK((pods && pod_status && binding));
  auto groups = Call(s.port(), "GET", "/apis");
  bool apps = false;
  for (const auto& g : groups.body["groups"]) {
    if (g["name"] == "apps") apps = g["preferredVersion"]["groupVersion"] == "apps/v1";
  }
  CHECK(apps);
  CHECK(Call(s.port(), "GET", "/apis/coordination.k8s.io/v1").body["resources"][0]["name"] ==
        "leases");
  CHECK(Call(s.port(), "GET", "/version").body["major"] == "1");
  s.fake.SetVersion("v1.33.2-eks-4d5e6f");  // as an EKS control plane reports it
  const auto version = Call(s.port(), "GET", "/version").body;
  CHECK(version["gitVersion"] == "v1.33.2-eks-4d5e6f");
  CHECK(version["major"] == "1");
  CHECK(version["minor"] == "33");
  CHECK(Call(s.port(), "GET", "/apis/nope.io/v1").status == 404);
  CHECK(Call(s.port(), "GET", "/api/v1/widgets").status == 404);
}

}  // namespace
}  // namespace neuron::fakes
