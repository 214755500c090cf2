// File: tests/k8s/object_view_test.cc
// Typed views read what an API object says, and read absent or mistyped fields as empty
// instead of throwing or inserting.
#include "lib/k8s/object_view.h"

#include "catch2/catch.hpp"

namespace neuron::k8s {
namespace {

using nlohmann::json;

TEST_CASE("ObjectView reads metadata", "[view]") {
  const json obj = json::parse(R"({"metadata": {
      "name": "dc", "namespace": "neuron", "uid": "u-1", "resourceVersion": "42",
      "generation": 3, "deletionTimestamp": "2026-11-26T00:00:00Z",
      "labels": {"app": "x", "n": 1}, "annotations": {"a": "b"},
      "finalizers": ["other", "k8s.aws/finalizer"]}})");
  const ObjectView v(obj);
  CHECK(v.name() == "dc");
  CHECK(v.namespace_() == "neuron");
  CHECK(v.uid() == "u-1");
  CHECK(v.resource_version() == "42");
  CHECK(v.generation() == 3);
  CHECK(v.deleting());
  CHECK(v.key() == "neuron/dc");
  CHECK(v.label("app") == "x");
  CHECK(v.label("n").empty());  // not a string
  CHECK(v.has_label("n"));
  CHECK_FALSE(v.has_label("missing"));
  CHECK(v.annotation("a") == "b");
  CHECK(v.has_finalizer("k8s.aws/finalizer"));
  CHECK_FALSE(v.has_finalizer("k8s.aws"));
}

TEST_CASE("views of malformed objects read as empty", "[view]") {
  for (const char* text : {R"(null)", R"([1,2])", R"("x")", R"({})", R"({"metadata": 7})",
                           R"({"metadata": {"name": 5, "labels": [], "finalizers": "x",
                               "generation": "3"}, "spec": [], "status": "Running"})"}) {
    CAPTURE(text);
    const json obj = json::parse(text);
    const PodView p(obj);
    CHECK(p.name().empty());
    CHECK(p.key().empty());
    CHECK(p.generation() == 0);
    CHECK_FALSE(p.deleting());
    CHECK(p.labels().is_object());
    CHECK(p.labels().empty());
    CHECK_FALSE(p.has_finalizer("x"));
    CHECK(p.node_name().empty());
    CHECK(p.phase().empty());
    CHECK_FALSE(p.finished());
    const NodeView n(obj);
    CHECK(n.taints().is_array());
    CHECK_FALSE(n.has_taint("k"));
    CHECK_FALSE(n.unschedulable());
    CHECK(obj == json::parse(text));  // nothing was inserted
  }
}

TEST_CASE("NodeView and PodView read their specs", "[view]") {
  const json node = json::parse(R"({"metadata": {"name": "n1"},
      "spec": {"unschedulable": true, "taints": [{"key": "a", "effect": "NoSchedule"}, 3]}})");
  const NodeView n(node);
  CHECK(n.key() == "n1");
  CHECK(n.unschedulable());
  CHECK(n.has_taint("a"));
  CHECK_FALSE(n.has_taint("b"));
  CHECK(n.taints().size() == 2);
  const json pod = json::parse(R"({"metadata": {"name": "p", "namespace": "ml"},
      "spec": {"nodeName": "n1"}, "status": {"phase": "Succeeded"}})");
  const PodView p(pod);
  CHECK(p.key() == "ml/p");
  CHECK(p.node_name() == "n1");
  CHECK(p.phase() == "Succeeded");
  CHECK(p.finished());
}

}  // namespace
}  // namespace neuron::k8s
