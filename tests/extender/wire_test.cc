// File: tests/extender/wire_test.cc
// The extender wire codec against JSON shaped exactly as kube-scheduler v1.32 sends it, plus
// hostile input: every failure is InvalidArgument, never an exception.
#include "lib/extender/wire.h"

#include <string>

#include "catch2/catch.hpp"
#include "nlohmann/json.hpp"

namespace neuron::extender {
namespace {

using nlohmann::json;

// Go's encoding of ExtenderArgs with nodeCacheCapable=true: Nodes is a nil pointer -> null.
const char kNamesArgs[] = R"({"Pod":{"metadata":{"name":"train","namespace":"ml","uid":"u-1",
 "creationTimestamp":null},"spec":{"containers":[{"name":"main","image":"x","resources":{
 "limits":{"aws.amazon.com/neuron":"4"},"requests":{"aws.amazon.com/neuron":"4","cpu":"1"}}}]},
 "status":{}},"Nodes":null,"NodeNames":["n1","n2"]})";

TEST_CASE("ExtenderArgs in NodeNames mode", "[extender][wire]") {
  auto a = DecodeExtenderArgs(kNamesArgs);
  REQUIRE(a.ok());
  CHECK(a->pod.name == "train");
  CHECK(a->pod.ns == "ml");
  CHECK(a->pod.uid == "u-1");
  CHECK(a->pod.request.devices == 4);
  CHECK(a->pod.request.cores == 0);
  REQUIRE(a->node_names);
  CHECK(*a->node_names == std::vector<std::string_view>{"n1", "n2"});
  CHECK_FALSE(a->nodes);
}

TEST_CASE("NodeNames are views into the body; escaped ones are unescaped and kept",
          "[extender][wire]") {
  const std::string body =
      R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":["n\u0031","plain","a\"b","ip-10-0-0-1.ec2.internal","x\/y"]})";
  auto a = DecodeExtenderArgs(body);
  REQUIRE(a.ok());
  // Every escaped name stays intact after later ones reused the scanner's buffer, and after the
  // args are moved.
  ExtenderArgs moved = *std::move(a);
  const std::vector<std::string_view>& names = *moved.node_names;
  CHECK(names ==
        std::vector<std::string_view>{"n1", "plain", "a\"b", "ip-10-0-0-1.ec2.internal", "x/y"});
  CHECK(moved.unescaped_names.size() == 3);
  auto in_body = [&body](std::string_view v) {
    return v.data() >= body.data() && v.data() + v.size() <= body.data() + body.size();
  };
  CHECK(in_body(names[1]));
  CHECK(in_body(names[3]));
  CHECK_FALSE(in_body(names[0]));
}

TEST_CASE("ExtenderArgs in full Nodes mode, keys in any case", "[extender][wire]") {
  json body = {{"pod", {{"metadata", {{"name", "p"}}}}},
               {"nodes",
                {{"metadata", json::object()},
                 {"items", {{{"metadata", {{"name", "n1"}}}, {"status", json::object()}}}}}},
               {"NodeNames", nullptr}};
  // Decoded node items are views into the request body, so the body must outlive them.
  const std::string text = body.dump();
  auto a = DecodeExtenderArgs(text);
  REQUIRE(a.ok());
  CHECK(a->pod.ns == "default");
  REQUIRE(a->nodes);
  CHECK(a->nodes->size() == 1);
  CHECK(a->CandidateNames() == std::vector<std::string_view>{"n1"});
  CHECK(a->nodes->front().json == body["nodes"]["items"][0].dump());
}

TEST_CASE("Node items are kept as their exact text, escapes and spacing included",
          "[extender][wire]") {
  const std::string item1 = R"({ "metadata" : {"labels":{"k":"v\u00e9\n"}, "name": "n\u0031"} })";
  const std::string item2 = R"({"kind":"Node","metadata":{"name":"n2"},"spec":{"taints":[]}})";
  const std::string body = R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"metadata":{},"items":[ )" +
                           item1 + " ,\n" + item2 + "]}}";
  auto a = DecodeExtenderArgs(body);
  REQUIRE(a.ok());
  REQUIRE(a->nodes->size() == 2);
  CHECK((*a->nodes)[0].name == "n1");
  CHECK((*a->nodes)[0].json == item1);
  CHECK((*a->nodes)[1].json == item2);
  CHECK(a->CandidateNames() == std::vector<std::string_view>{"n1", "n2"});
}

TEST_CASE("ExtenderArgs keys repeat as in Go: the last one wins", "[extender][wire]") {
  auto a = DecodeExtenderArgs(
      R"({"Pod":{"metadata":{"name":"first"}},"NodeNames":["a"],"pod":{"metadata":{"name":"second"}},"nodenames":["b","c"]})");
  REQUIRE(a.ok());
  CHECK(a->pod.name == "second");
  CHECK(*a->node_names == std::vector<std::string_view>{"b", "c"});
}

TEST_CASE("bad ExtenderArgs are InvalidArgument", "[extender][wire]") {
  for (
      const std::string& bad : {
          std::string("{"),
          std::string("[]"),
          std::string("null"),
          std::string(R"({"NodeNames":["a"]})"),
          std::string(R"({"Pod":{},"NodeNames":"a"})"),
          std::string(R"({"Pod":{}})"),
          std::string(R"({"Pod":[],"NodeNames":[]})"),
          std::string(R"({"Pod":{},"Nodes":{"items":[{}]}})"),
          std::string(
              R"({"Pod":{"spec":{"containers":[{"resources":{"requests":{"aws.amazon.com/neuron":-2}}}]}},"NodeNames":[]})"),
          std::string(
              R"({"Pod":{"spec":{"containers":[{"resources":{"requests":{"aws.amazon.com/neuron":"1.5"}}}]}},"NodeNames":[]})"),
          std::string(
              R"({"Pod":{"spec":{"containers":[{"resources":{"limits":{"aws.amazon.com/neuroncore":1e300}}}]}},"NodeNames":[]})"),
          std::string(
              R"({"Pod":{"spec":{"containers":[{"resources":{"limits":{"aws.amazon.com/neuroncore":18446744073709551615}}}]}},"NodeNames":[]})"),
          std::string(
              R"({"Pod":{"spec":{"containers":[{"resources":{"limits":{"aws.amazon.com/neuroncore":"999999999999999999999999"}}}]}},"NodeNames":[]})"),
          std::string(100000, '['),
          std::string(R"({"Pod":{},"NodeNames":[]} {})"),
          std::string(R"({"Pod":{},"NodeNames":[1]})"),
          std::string(R"({"Pod":{},"Nodes":{"items":{}}})"),
          std::string(R"({"Pod":{},"Nodes":{"items":[{"metadata":{"name":7}}]}})"),
          std::string(R"({"Pod":{},"Nodes":{"items":[{"metadata":{"name":"n"}},]}})"),
          std::string(R"({"Pod":{},"Nodes":[]})"),
      }) {
    auto a = DecodeExtenderArgs(bad);
    CAPTURE(bad.substr(0, 120));
    REQUIRE_FALSE(a.ok());
    CHECK(a.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_FALSE(a.status().message().empty());
  }
}

TEST_CASE("ExtenderFilterResult is encoded with Go's field names", "[extender][wire]") {
  FilterResult r;
  r.node_names = std::vector<std::string>{"n1"};
  r.failed["n2"] = "trn1.32xlarge takes 1, 4, 8 or 16 devices; asked 3";
  json j = json::parse(EncodeFilterResult(r));
  CHECK(j == json::parse(R"({"Nodes":null,"NodeNames":["n1"],"FailedNodes":{"n2":
    "trn1.32xlarge takes 1, 4, 8 or 16 devices; asked 3"},"FailedAndUnresolvableNodes":{},
    "Error":""})"));

  FilterResult full;
  const std::string node = R"({"metadata":{"name":"n1","labels":{"a":"b"}},"status":{}})";
  full.nodes = std::vector<std::string_view>{node};
  const std::string encoded = EncodeFilterResult(full);
  j = json::parse(encoded);
  CHECK(j["Nodes"]["items"][0]["metadata"]["name"] == "n1");
  CHECK(j["NodeNames"].is_null());
  auto back = DecodeFilterResult(encoded);
  REQUIRE(back.ok());
  REQUIRE(back->nodes->size() == 1);
  CHECK(back->nodes->front() == node);
}

TEST_CASE("HostPriorityList, binding and preemption types", "[extender][wire]") {
  CHECK(json::parse(EncodeHostPriorityList({{"n1", 10}, {"n2", 0}})) ==
        json::parse(R"([{"Host":"n1","Score":10},{"Host":"n2","Score":0}])"));
  CHECK(EncodeHostPriorityList({}) == "[]");

  auto b = DecodeBindingArgs(R"({"PodName":"p","PodNamespace":"ml","PodUID":"u","Node":"n1"})");
  REQUIRE(b.ok());
  CHECK(b->pod_name == "p");
  CHECK(b->pod_namespace == "ml");
  CHECK(b->pod_uid == "u");
  CHECK(b->node == "n1");
  CHECK_FALSE(DecodeBindingArgs(R"({"PodName":"p"})").ok());
  CHECK_FALSE(DecodeBindingArgs(R"({"PodName":7,"Node":"n"})").ok());
  CHECK(json::parse(EncodeBindingResult("")) == json::parse(R"({"Error":""})"));

  auto meta = DecodePreemptionArgs(
      R"({"Pod":{"metadata":{"name":"p"}},"NodeNameToVictims":null,"NodeNameToMetaVictims":
      {"n1":{"Pods":[{"UID":"v1"},{"UID":"v2"}],"NumPDBViolations":1}}})");
  REQUIRE(meta.ok());
  CHECK(meta->victims.at("n1").pod_uids == std::vector<std::string>{"v1", "v2"});
  CHECK(meta->victims.at("n1").num_pdb_violations == 1);
  auto full = DecodePreemptionArgs(
      R"({"Pod":{"metadata":{"name":"p"}},"NodeNameToVictims":{"n1":{"Pods":[{"metadata":
      {"name":"v","uid":"v9"}}],"NumPDBViolations":0}},"NodeNameToMetaVictims":null})");
  REQUIRE(full.ok());
  CHECK(full->victims.at("n1").pod_uids == std::vector<std::string>{"v9"});
  CHECK(json::parse(EncodePreemptionResult(meta->victims)) ==
        json::parse(R"({"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"v1"},{"UID":"v2"}],
        "NumPDBViolations":1}}})"));
}

}  // namespace
}  // namespace neuron::extender
