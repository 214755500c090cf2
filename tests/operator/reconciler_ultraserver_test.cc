// File: tests/operator/reconciler_ultraserver_test.cc
// A reconcile pass against the fake kube-apiserver reports the UltraServers among the selected
// nodes in status.ultraServers (the CRD's schema keeps the field), and drops it when their
// labels go.
#include <string>

#include "lib/operator/reconciler.h"
#include "tests/operator/operator_test_util.h"

namespace neuron::op {
namespace {

using nlohmann::json;
using namespace testutil;  // NOLINT(google-build-using-namespace): test helpers

// Labels that make a node match the sample's selector, plus its UltraServer labels.
json Labels(const std::string& server, int node) {
  json labels = LoadYaml(kSample).front()["spec"].value("selector", json::object());
  labels["node.kubernetes.io/instance-type"] = "trn2u.48xlarge";
  if (server.empty()) return labels;
  labels["neuron.amazonaws.com/ultraserver-mode"] = "1_2_4";
  labels["neuron.amazonaws.com/ultraserver-server-id-4"] = server;
  labels["neuron.amazonaws.com/ultraserver-node-id-4"] = std::to_string(node);
  labels["neuron.amazonaws.com/ultraserver-server-id-2"] = server + "-" + std::to_string(node / 2);
  labels["neuron.amazonaws.com/ultraserver-node-id-2"] = std::to_string(node % 2);
  return labels;
}

TEST_CASE("status.ultraServers lists the selected nodes' UltraServers", "[operator][reconcile]") {
  Cluster cluster({"kmm", "nfd"});
  OperatorSettings settings;
  settings.ns = kNs;
  Reconciler reconciler(*cluster.client, settings, ListNodes(*cluster.client));
  for (int n : {3, 1, 0, 2}) {
    cluster.AddNode("us-" + std::to_string(n), Labels("9745fef86328c694", n));
  }
  cluster.AddNode("plain", Labels("", 0));
  cluster.AddNode("elsewhere", {{"neuron.amazonaws.com/ultraserver-mode", "1_2_4"},
                                {"neuron.amazonaws.com/ultraserver-server-id-4", "ffff"},
                                {"neuron.amazonaws.com/ultraserver-node-id-4", "0"}});
  cluster.CreateSample(kSample);
  REQUIRE(reconciler.Reconcile(kNs, "neuron").ok());
  json dc = cluster.GetDc("neuron");
  CAPTURE(dc["status"].dump(2));
  CHECK(dc["status"]["ultraServers"] == json{{"count", 1},
                                             {"servers",
                                              {{{"id", "9745fef86328c694"},
                                                {"nodes", {"us-0", "us-1", "us-2", "us-3"}},
                                                {"modes", "1_2_4"}}}},
                                             {"nodesWithoutServerId", 0}});

  // The agents remove the labels (the nodes left the UltraServer): the field goes.
  for (int n = 0; n < 4; ++n) {
    const std::string name = "us-" + std::to_string(n);
    json patch = {{"metadata", {{"labels", json::object()}}}};
    for (const char* k : {"mode", "server-id-4", "node-id-4", "server-id-2", "node-id-2"}) {
      patch["metadata"]["labels"][std::string("neuron.amazonaws.com/ultraserver-") + k] = nullptr;
    }
    REQUIRE(cluster.client->Patch(k8s::resources::kNodes, "", name, k8s::PatchType::kMerge, patch)
                .ok());
  }
  REQUIRE(reconciler.Reconcile(kNs, "neuron").ok());
  CHECK_FALSE(cluster.GetDc("neuron")["status"].contains("ultraServers"));
}

}  // namespace
}  // namespace neuron::op
