// File: tests/fakes/apiserver/fake_apiserver_resource_test.cc
// resource.k8s.io (DRA) in the fake apiserver, over real HTTP: discovery of v1 and v1beta1, one
// store seen through both versions, ResourceSlice field selectors (list and watch), the
// ResourceClaim status subresource, scopes, and a version switched off.
#include <string>

#include "catch2/catch.hpp"
#include "httplib.h"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/fakes/apiserver/test_client.h"

namespace neuron::fakes {
namespace {

using nlohmann::json;
using testing::Call;

constexpr char kV1[] = "/apis/resource.k8s.io/v1";
constexpr char kV1beta1[] = "/apis/resource.k8s.io/v1beta1";

struct ResourceServer {
  ResourceServer() { REQUIRE(fake.Start().ok()); }
  FakeApiServer fake;
  int port() const { return fake.port(); }
};

json Slice(const std::string& name, const std::string& node, const std::string& driver) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"driver", driver},
            {"nodeName", node},
            {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices", {{{"name", "neurondevice0"}}}}}}};
}

std::vector<std::string> Names(const json& list) {
  std::vector<std::string> out;
  for (const json& item : list["items"]) out.push_back(item["metadata"]["name"]);
  return out;
}

json FindResource(const json& resource_list, const std::string& name) {
  for (const json& r : resource_list["resources"]) {
    if (r["name"] == name) return r;
  }
  return nullptr;
}

TEST_CASE("discovery lists resource.k8s.io v1 (preferred) and v1beta1", "[apiserver][dra]") {
  ResourceServer s;
  auto group = Call(s.port(), "GET", "/apis/resource.k8s.io");
  REQUIRE(group.status == 200);
  CHECK(group.body["preferredVersion"]["version"] == "v1");
  REQUIRE(group.body["versions"].size() == 2);
  CHECK(group.body["versions"][1]["groupVersion"] == "resource.k8s.io/v1beta1");

  for (const char* path : {kV1, kV1beta1}) {
    auto list = Call(s.port(), "GET", path);
    REQUIRE(list.status == 200);
    CHECK(FindResource(list.body, "resourceslices")["namespaced"] == false);
    CHECK(FindResource(list.body, "resourceslices")["kind"] == "ResourceSlice");
    CHECK(FindResource(list.body, "resourceclaims")["namespaced"] == true);
    CHECK(FindResource(list.body, "resourceclaims/status").is_object());
    CHECK(FindResource(list.body, "resourceclaimtemplates")["namespaced"] == true);
    CHECK(FindResource(list.body, "resourceclaimtemplates/status").is_null());
    CHECK(FindResource(list.body, "deviceclasses")["namespaced"] == false);
    CHECK(FindResource(list.body, "resourceslices/status").is_null());
  }
}

TEST_CASE("a ResourceSlice created at v1 is read at v1beta1 with that apiVersion",
          "[apiserver][dra]") {
  ResourceServer s;
  auto created =
      Call(s.port(), "POST", std::string(kV1) + "/resourceslices", Slice("a", "n1", "x.io"));
  REQUIRE(created.status == 201);
  CHECK(created.body["apiVersion"] == "resource.k8s.io/v1");
  CHECK(!created.body["metadata"].contains("namespace"));

  auto beta = Call(s.port(), "GET", std::string(kV1beta1) + "/resourceslices/a");
  REQUIRE(beta.status == 200);
  CHECK(beta.body["apiVersion"] == "resource.k8s.io/v1beta1");
  CHECK(beta.body["kind"] == "ResourceSlice");
  CHECK(beta.body["spec"] == created.body["spec"]);  // passed through (see registry.cc)
  CHECK(beta.body["metadata"]["uid"] == created.body["metadata"]["uid"]);

  auto list = Call(s.port(), "GET", std::string(kV1beta1) + "/resourceslices");
  REQUIRE(list.status == 200);
  CHECK(list.body["kind"] == "ResourceSliceList");
  CHECK(list.body["items"][0]["apiVersion"] == "resource.k8s.io/v1beta1");

  // Cluster-scoped: no namespaced path.
  CHECK(Call(s.port(), "GET", std::string(kV1) + "/namespaces/default/resourceslices/a").status ==
        404);
}

TEST_CASE("ResourceSlices filter by spec.nodeName and spec.driver", "[apiserver][dra]") {
  ResourceServer s;
  const std::string coll = std::string(kV1) + "/resourceslices";
  REQUIRE(Call(s.port(), "POST", coll, Slice("a", "n1", "neuron.aws.com")).status == 201);
  REQUIRE(Call(s.port(), "POST", coll, Slice("b", "n1", "gpu.example.com")).status == 201);
  REQUIRE(Call(s.port(), "POST", coll, Slice("c", "n2", "neuron.aws.com")).status == 201);
  json no_node = Slice("d", "", "neuron.aws.com");
  no_node["spec"].erase("nodeName");
  REQUIRE(Call(s.port(), "POST", coll, no_node).status == 201);

  auto by_node = Call(s.port(), "GET", coll + "?fieldSelector=spec.nodeName%3Dn1");
  REQUIRE(by_node.status == 200);
  CHECK(Names(by_node.body) == std::vector<std::string>{"a", "b"});

  auto both = Call(s.port(), "GET",
                   coll + "?fieldSelector=spec.nodeName%3Dn1%2Cspec.driver%3Dneuron.aws.com");
  CHECK(Names(both.body) == std::vector<std::string>{"a"});

  // Upstream indexes a missing nodeName as "".
  auto unset = Call(s.port(), "GET", coll + "?fieldSelector=spec.nodeName%3D");
  CHECK(Names(unset.body) == std::vector<std::string>{"d"});

  auto beta =
      Call(s.port(), "GET",
           std::string(kV1beta1) + "/resourceslices?fieldSelector=spec.driver%3Dneuron.aws.com");
  CHECK(Names(beta.body) == std::vector<std::string>{"a", "c", "d"});

  auto bad = Call(s.port(), "GET", coll + "?fieldSelector=spec.pool.name%3Dn1");
  CHECK(bad.status == 400);
  // Claims support only metadata fields.
  auto claims =
      Call(s.port(), "GET", std::string(kV1) + "/resourceclaims?fieldSelector=spec.nodeName%3Dn1");
  CHECK(claims.status == 400);
}

TEST_CASE("a ResourceSlice watch with a field selector sees only its node", "[apiserver][dra]") {
  ResourceServer s;
  const std::string coll = std::string(kV1) + "/resourceslices";
  REQUIRE(Call(s.port(), "POST", coll, Slice("a", "n1", "neuron.aws.com")).status == 201);
  const std::string rv = std::to_string(s.fake.ResourceVersion());
  REQUIRE(Call(s.port(), "POST", coll, Slice("b", "n2", "neuron.aws.com")).status == 201);
  REQUIRE(Call(s.port(), "POST", coll, Slice("c", "n1", "neuron.aws.com")).status == 201);
  REQUIRE(Call(s.port(), "DELETE", coll + "/c").status == 200);

  httplib::Client cli("127.0.0.1", s.port());
  cli.set_read_timeout(10, 0);
  std::string body;
  auto r = cli.Get(std::string(kV1beta1) + "/resourceslices?watch=1&timeoutSeconds=1" +
                       "&fieldSelector=spec.nodeName%3Dn1&resourceVersion=" + rv,
                   [&](const char* data, size_t n) {
                     body.append(data, n);
                     return true;
                   });
  REQUIRE(r);
  REQUIRE(r->status == 200);
  std::vector<std::string> events;
  size_t start = 0;
  for (size_t nl; (nl = body.find('\n', start)) != std::string::npos; start = nl + 1) {
    json e = json::parse(body.substr(start, nl - start));
    if (e["type"] == "BOOKMARK") continue;
    CHECK(e["object"]["apiVersion"] == "resource.k8s.io/v1beta1");
    events.push_back(e["type"].get<std::string>() + " " +
                     e["object"]["metadata"]["name"].get<std::string>());
  }
  CHECK(events == std::vector<std::string>{"ADDED c", "DELETED c"});
}

TEST_CASE("ResourceClaim status is a subresource", "[apiserver][dra]") {
  ResourceServer s;
  const std::string coll = std::string(kV1) + "/namespaces/ns1/resourceclaims";
  json claim = {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaim"},
      {"metadata", {{"name", "c1"}}},
      {"spec",
       {{"devices",
         {{"requests", {{{"name", "r"}, {"exactly", {{"deviceClassName", "neuron.aws.com"}}}}}}}}}},
      {"status", {{"allocation", {{"devices", {{"results", json::array()}}}}}}}};
  auto created = Call(s.port(), "POST", coll, claim);
  REQUIRE(created.status == 201);
  CHECK(created.body["metadata"]["namespace"] == "ns1");

  json allocated = created.body;
  allocated["status"] = {{"allocation",
                          {{"devices",
                            {{"results",
                              {{{"request", "r"},
                                {"driver", "neuron.aws.com"},
                                {"pool", "n1"},
                                {"device", "neurondevice0"}}}}}}}}};
  auto status = Call(s.port(), "PUT", coll + "/c1/status", allocated);
  REQUIRE(status.status == 200);
  CHECK(status.body["status"]["allocation"]["devices"]["results"][0]["device"] == "neurondevice0");
  CHECK(status.body["metadata"]["generation"] == 1);  // status writes leave generation alone

  // The main resource ignores .status.
  json cleared = status.body;
  cleared["status"] = json::object();
  cleared["metadata"]["labels"]["x"] = "y";
  auto main = Call(s.port(), "PUT", coll + "/c1", cleared);
  REQUIRE(main.status == 200);
  CHECK(main.body["metadata"]["labels"]["x"] == "y");
  CHECK(main.body["status"]["allocation"]["devices"]["results"].size() == 1);

  // Same object at v1beta1, status included.
  auto beta = Call(s.port(), "GET", std::string(kV1beta1) + "/namespaces/ns1/resourceclaims/c1");
  REQUIRE(beta.status == 200);
  CHECK(beta.body["apiVersion"] == "resource.k8s.io/v1beta1");
  CHECK(beta.body["status"] == main.body["status"]);
}

TEST_CASE("ResourceClaimTemplates are namespaced, DeviceClasses cluster-scoped",
          "[apiserver][dra]") {
  ResourceServer s;
  json tmpl = {{"apiVersion", "resource.k8s.io/v1"},
               {"kind", "ResourceClaimTemplate"},
               {"metadata", {{"name", "t1"}}},
               {"spec", {{"spec", {{"devices", {{"requests", json::array()}}}}}}}};
  REQUIRE(Call(s.port(), "POST", std::string(kV1) + "/namespaces/ns1/resourceclaimtemplates", tmpl)
              .status == 201);
  CHECK(Call(s.port(), "GET", std::string(kV1beta1) + "/namespaces/ns1/resourceclaimtemplates/t1")
            .body["apiVersion"] == "resource.k8s.io/v1beta1");
  CHECK(Call(s.port(), "GET", std::string(kV1) + "/resourceclaimtemplates").body["items"].size() ==
        1);  // all namespaces

  json dc = {{"apiVersion", "resource.k8s.io/v1"},
             {"kind", "DeviceClass"},
             {"metadata", {{"name", "neuron.aws.com"}, {"namespace", "ignored"}}},
             {"spec",
              {{"selectors", {{{"cel", {{"expression", "device.driver == 'neuron.aws.com'"}}}}}}}}};
  auto created = Call(s.port(), "POST", std::string(kV1) + "/deviceclasses", dc);
  REQUIRE(created.status == 201);
  CHECK(!created.body["metadata"].contains("namespace"));
  CHECK(s.fake.Get(std::string(kV1beta1) + "/deviceclasses/neuron.aws.com")["apiVersion"] ==
        "resource.k8s.io/v1beta1");
}

TEST_CASE("a disabled version disappears from discovery; its objects stay", "[apiserver][dra]") {
  ResourceServer s;
  REQUIRE(Call(s.port(), "POST", std::string(kV1) + "/resourceslices", Slice("a", "n1", "x.io"))
              .status == 201);
  s.fake.DisableGroupVersion("resource.k8s.io/v1");

  auto group = Call(s.port(), "GET", "/apis/resource.k8s.io");
  REQUIRE(group.status == 200);
  CHECK(group.body["preferredVersion"]["version"] == "v1beta1");
  CHECK(group.body["versions"].size() == 1);
  CHECK(Call(s.port(), "GET", kV1).status == 404);
  CHECK(Call(s.port(), "GET", std::string(kV1) + "/resourceslices").status == 404);
  auto beta = Call(s.port(), "GET", std::string(kV1beta1) + "/resourceslices/a");
  REQUIRE(beta.status == 200);
  CHECK(beta.body["apiVersion"] == "resource.k8s.io/v1beta1");

  s.fake.DisableGroupVersion("resource.k8s.io/v1beta1");
  CHECK(Call(s.port(), "GET", "/apis/resource.k8s.io").status == 404);
}

}  // namespace
}  // namespace neuron::fakes
