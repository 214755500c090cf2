// File: tests/fakes/apiserver/fake_apiserver_protobuf_test.cc
// Protobuf request bodies (what kubectl >= 1.2x sends for built-in kinds), the kube-root-ca.crt
// ConfigMap every namespace gets, and content negotiation, over real HTTP.
#include <string>

#include "absl/strings/escaping.h"
#include "catch2/catch.hpp"
#include "httplib.h"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/fakes/apiserver/kube.pb.h"
#include "tests/fakes/apiserver/protobuf_body.h"

namespace neuron::fakes {
namespace {

using apiserver::DecodeProtobufObject;
using nlohmann::json;
using std::string_literals::operator""s;
namespace pb = kubepb;

constexpr char kProtobuf[] = "application/vnd.kubernetes.protobuf";

// Captured from kubectl v1.32.5: `kubectl create namespace x` and, with namespace demo in the
// context, `kubectl create configmap c --from-literal=a=b`. Note that ObjectMeta carries every
// string field, empty ones included, and an empty creationTimestamp.
std::string Hex(const char* hex) { return absl::HexStringToBytes(hex); }
const std::string kKubectlNamespace = Hex(
    "6b3873000a0f0a02763112094e616d65737061636512190a110a017812001a0022002a0032003800420012001a02"
    "0a001a002200");
const std::string kKubectlConfigMap = Hex(
    "6b3873000a0f0a0276311209436f6e6669674d6170121b0a110a016312001a0022002a0032003800420012060a01"
    "611201621a002200");

std::string Envelope(const std::string& api_version, const std::string& kind,
                     const google::protobuf::Message& obj) {
  pb::Unknown env;
  env.mutable_type_meta()->set_api_version(api_version);
  env.mutable_type_meta()->set_kind(kind);
  env.set_raw(obj.SerializeAsString());
  return std::string(apiserver::kProtobufMagic) + env.SerializeAsString();
}

struct ProtobufServer {
  ProtobufServer() { REQUIRE(fake.Start().ok()); }
  httplib::Result Post(const std::string& path, const std::string& body,
                       const char* type = kProtobuf) {
    httplib::Client cli("127.0.0.1", fake.port());
    // As kubectl 1.32 sends it.
    return cli.Post(path.c_str(),
                    {{"Accept", "application/vnd.kubernetes.protobuf,application/json"}}, body,
                    type);
  }
  FakeApiServer fake;
};

json Body(const httplib::Result& r) { return json::parse(r->body, nullptr, false); }

TEST_CASE("kubectl 1.32's protobuf bodies create a namespace and a configmap", "[apiserver][pb]") {
  ProtobufServer s;
  auto ns = s.Post("/api/v1/namespaces?fieldManager=kubectl-create&fieldValidation=Strict",
                   kKubectlNamespace);
  REQUIRE(ns);
  INFO(ns->body);
  CHECK(ns->status == 201);
  // The reply is JSON, which kubectl accepts (it asks for protobuf, then JSON).
  CHECK(ns->get_header_value("Content-Type") == "application/json");
  CHECK(Body(ns)["metadata"]["name"] == "x");
  const json stored = s.fake.Get("/api/v1/namespaces/x");
  CHECK(stored["kind"] == "Namespace");
  CHECK(stored["status"]["phase"] == "Active");
  CHECK(!stored["metadata"].contains("namespace"));

  auto cm =
      s.Post("/api/v1/namespaces/demo/configmaps?fieldManager=kubectl-create", kKubectlConfigMap);
  REQUIRE(cm);
  INFO(cm->body);
  CHECK(cm->status == 201);
  const json c = s.fake.Get("/api/v1/namespaces/demo/configmaps/c");
  CHECK(c["data"] == json{{"a", "b"}});
  CHECK(c["metadata"]["namespace"] == "demo");
  CHECK(c["metadata"]["managedFields"][0]["manager"] == "kubectl-create");
  CHECK(!c.contains("binaryData"));
}

TEST_CASE("every field the fake decodes reaches the stored JSON", "[apiserver][pb]") {
  pb::ConfigMap cm;
  auto* md = cm.mutable_metadata();
  md->set_generate_name("cfg-");
  (*md->mutable_labels())["app"] = "demo";
  (*md->mutable_annotations())["neuron.amazonaws.com/x"] = "1";
  md->add_finalizers("example.com/keep");
  auto* ref = md->add_owner_references();
  ref->set_api_version("v1");
  ref->set_kind("Namespace");
  ref->set_name("n");
  ref->set_uid("u-1");
  ref->set_controller(true);
  md->add_managed_fields("ignored");
  (*cm.mutable_data())["k"] = "v";
  (*cm.mutable_binary_data())["b"] = std::string("\0\xff", 2);
  cm.set_immutable(false);
  auto j = DecodeProtobufObject(Envelope("v1", "ConfigMap", cm));
  REQUIRE(j.ok());
  CHECK((*j)["apiVersion"] == "v1");
  CHECK((*j)["kind"] == "ConfigMap");
  CHECK((*j)["metadata"] == json::parse(R"({"generateName":"cfg-","labels":{"app":"demo"},
      "annotations":{"neuron.amazonaws.com/x":"1"},"finalizers":["example.com/keep"],
      "ownerReferences":[{"apiVersion":"v1","kind":"Namespace","name":"n","uid":"u-1",
      "controller":true}]})"));
  CHECK((*j)["data"] == json{{"k", "v"}});
  CHECK((*j)["binaryData"] == json{{"b", "AP8="}});
  CHECK((*j)["immutable"] == false);

  pb::Secret sec;
  sec.mutable_metadata()->set_name("s");
  (*sec.mutable_data())["token"] = "abc";
  (*sec.mutable_string_data())["plain"] = "p";
  sec.set_type("Opaque");
  sec.set_immutable(true);
  j = DecodeProtobufObject(Envelope("v1", "Secret", sec));
  REQUIRE(j.ok());
  CHECK((*j)["data"] == json{{"token", "YWJj"}});
  CHECK((*j)["stringData"] == json{{"plain", "p"}});
  CHECK((*j)["type"] == "Opaque");
  CHECK((*j)["immutable"] == true);

  pb::Namespace ns;
  ns.mutable_metadata()->set_name("n");
  (*ns.mutable_metadata()->mutable_labels())["team"] = "a";
  ns.mutable_spec()->add_finalizers("kubernetes");
  j = DecodeProtobufObject(Envelope("v1", "Namespace", ns));
  REQUIRE(j.ok());
  CHECK((*j)["metadata"] == json{{"name", "n"}, {"labels", {{"team", "a"}}}});
  CHECK((*j)["spec"]["finalizers"] == json::array({"kubernetes"}));

  pb::ServiceAccount sa;
  sa.mutable_metadata()->set_name("sa");
  sa.add_secrets()->set_name("tok");
  sa.add_image_pull_secrets()->set_name("pull");
  sa.set_automount_service_account_token(false);
  j = DecodeProtobufObject(Envelope("v1", "ServiceAccount", sa));
  REQUIRE(j.ok());
  CHECK((*j)["secrets"] == json::parse(R"([{"name":"tok"}])"));
  CHECK((*j)["imagePullSecrets"] == json::parse(R"([{"name":"pull"}])"));
  CHECK((*j)["automountServiceAccountToken"] == false);

  ProtobufServer s;
  auto r = s.Post("/api/v1/namespaces/n/secrets", Envelope("v1", "Secret", sec));
  REQUIRE(r);
  CHECK(r->status == 201);
  CHECK(s.fake.Get("/api/v1/namespaces/n/secrets/s")["data"]["token"] == "YWJj");
}

TEST_CASE("protobuf kinds the fake does not decode get 415, bad bodies 400", "[apiserver][pb]") {
  ProtobufServer s;
  pb::ConfigMap not_a_deployment;  // any raw bytes: the kind decides
  auto r = s.Post("/apis/apps/v1/namespaces/n/deployments",
                  Envelope("apps/v1", "Deployment", not_a_deployment));
  REQUIRE(r);
  CHECK(r->status == 415);
  CHECK(Body(r)["reason"] == "UnsupportedMediaType");
  CHECK(Body(r)["message"].get<std::string>().find("Deployment") != std::string::npos);
  CHECK(s.Post("/api/v1/namespaces/n/pods", Envelope("v1", "Pod", not_a_deployment))->status ==
        415);

  // Every truncation of a real body is rejected cleanly (or, where the cut falls on a field
  // boundary, decodes to a smaller object): never a crash, never a 5xx.
  for (size_t n = 0; n < kKubectlConfigMap.size(); ++n) {
    auto j = DecodeProtobufObject(kKubectlConfigMap.substr(0, n));
    if (!j.ok()) CHECK(j.status().code() == absl::StatusCode::kInvalidArgument);
  }
  CHECK(!DecodeProtobufObject(kKubectlConfigMap.substr(0, 20)).ok());

  const std::string bad[] = {
      "",                                // empty
      "k8s",                             // short magic
      "K8S\0\x0a\x00"s,                  // wrong magic
      "{\"kind\":\"Namespace\"}",        // JSON sent with the protobuf content type
      "k8s\0\x0a\xff\xff\xff\xff\x0f"s,  // typeMeta length 4 GiB
      "k8s\0\x12\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01"s,  // over-long varint
      "k8s\0\x0a\x05\x0a\x02v1"s,                            // typeMeta cut short
      "k8s\0\x0b"s,                                          // group-start wire type
      "k8s\0\xf8\xff\xff\xff\x0f\x00"s,                      // unknown field number in the envelope
  };
  for (const std::string& b : bad) {
    INFO(absl::BytesToHexString(b));
    auto j = DecodeProtobufObject(b);
    CHECK(j.status().code() == absl::StatusCode::kInvalidArgument);
    auto h = s.Post("/api/v1/namespaces", b);
    REQUIRE(h);
    CHECK(h->status == 400);
    CHECK(Body(h)["reason"] == "BadRequest");
  }

  // A field the fake does not decode (ObjectMeta field 99) is refused, not silently dropped.
  pb::Unknown env;
  env.mutable_type_meta()->set_api_version("v1");
  env.mutable_type_meta()->set_kind("Namespace");
  env.set_raw(Hex("0a070a01789a060178"));  // metadata{name:"x", field 99:"x"}
  auto j = DecodeProtobufObject(std::string(apiserver::kProtobufMagic) + env.SerializeAsString());
  CHECK(j.status().code() == absl::StatusCode::kInvalidArgument);
  env.set_content_encoding("gzip");
  env.set_raw("");
  j = DecodeProtobufObject(std::string(apiserver::kProtobufMagic) + env.SerializeAsString());
  CHECK(j.status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("a new namespace holds kube-root-ca.crt, as on a real cluster", "[apiserver]") {
  ProtobufServer s;
  REQUIRE(
      s.Post("/api/v1/namespaces", R"({"metadata":{"name":"n1"}})", "application/json")->status ==
      201);
  const std::string ca = "/api/v1/namespaces/n1/configmaps/kube-root-ca.crt";
  json cm = s.fake.Get(ca);
  REQUIRE(cm.is_object());
  CHECK(cm["data"]["ca.crt"].get<std::string>().find("BEGIN CERTIFICATE") != std::string::npos);
  CHECK(cm["metadata"]["managedFields"][0]["manager"] == "kube-controller-manager");
  // The publisher puts it back when it is deleted, but not while its namespace goes away.
  httplib::Client cli("127.0.0.1", s.fake.port());
  REQUIRE(cli.Delete(ca.c_str())->status == 200);
  json again = s.fake.Get(ca);
  REQUIRE(again.is_object());
  CHECK(again["metadata"]["uid"] != cm["metadata"]["uid"]);
  REQUIRE(cli.Delete("/api/v1/namespaces/n1")->status == 200);
  CHECK(s.fake.Get(ca).is_null());
  // Namespaces that were never created (the fake does not require them) stay empty.
  CHECK(s.fake.Get("/api/v1/namespaces/other/configmaps/kube-root-ca.crt").is_null());
}

TEST_CASE("kubectl 1.32's Accept headers get JSON, including discovery", "[apiserver][pb]") {
  ProtobufServer s;
  httplib::Client cli("127.0.0.1", s.fake.port());
  const char* aggregated =
      "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
      "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
      "application/json";
  for (const char* path : {"/api", "/apis"}) {
    auto r = cli.Get(path, {{"Accept", aggregated}});
    REQUIRE(r);
    CHECK(r->status == 200);
    // Plain media type: client-go then reads legacy (v1) discovery.
    CHECK(r->get_header_value("Content-Type") == "application/json");
    CHECK(Body(r)["kind"] == (std::string(path) == "/api" ? "APIVersions" : "APIGroupList"));
  }
  auto r = cli.Get("/api/v1/namespaces/default/configmaps",
                   {{"Accept", "application/vnd.kubernetes.protobuf,application/json"}});
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->get_header_value("Content-Type") == "application/json");
  CHECK(Body(r)["kind"] == "ConfigMapList");
}

}  // namespace
}  // namespace neuron::fakes
