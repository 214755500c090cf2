// File: tests/extender/ultraserver_test_util.h
// Trn2 UltraServer nodes and pod-group pods for the extender's tests: Node objects labelled
// as AWS's device plugin labels them, with identities from the --emulate-ultraserver model
// (lib/ultraserver/emulation.h), and pods of neuron.aws.com/pod-group or LeaderWorkerSet groups.
#pragma once

#include <string>

#include "catch2/catch.hpp"
#include "lib/ultraserver/emulation.h"
#include "lib/ultraserver/labels.h"
#include "tests/extender/view_test_util.h"

namespace neuron::extender::testutil {

// The identity the driver's class attributes of emulated node "<us>:<node>" describe.
inline ultraserver::Identity EmulatedIdentity(const std::string& us, int node) {
  auto parsed = ultraserver::ParseEmulatedNode(us + ":" + std::to_string(node));
  REQUIRE(parsed.ok());
  const auto attrs = ultraserver::EmulatedClassAttributes(*parsed);
  ultraserver::Identity id;
  id.modes = *ultraserver::ParseModes(attrs.at(ultraserver::kModesFile));
  id.server_id_4 = *ultraserver::ParseServerId(attrs.at(ultraserver::ServerIdFile(4)));
  id.server_id_2 = *ultraserver::ParseServerId(attrs.at(ultraserver::ServerIdFile(2)));
  id.node_id_4 = *ultraserver::ParseNodeId(attrs.at(ultraserver::NodeIdFile(4)));
  id.node_id_2 = *ultraserver::ParseNodeId(attrs.at(ultraserver::NodeIdFile(2)));
  return id;
}

// A trn2u.48xlarge node (16 devices, 64 cores at LNC 2) of UltraServer `us`, node id `node`.
inline json UsNode(const std::string& name, const std::string& us, int node, int devices = 16) {
  json labels = json::object();
  for (const auto& [k, v] : ultraserver::IdentityLabels(EmulatedIdentity(us, node))) {
    labels[k] = v;
  }
  json n = Node(name, "trn2u.48xlarge", 16, 64, labels);
  n["status"]["allocatable"][kDev] = std::to_string(devices);
  n["status"]["allocatable"][kCore] = std::to_string(devices * 4);
  return n;
}

// A pod of group `group` (label neuron.aws.com/pod-group) asking for a set of `n` nodes and
// `devices` Neuron devices.
inline json GroupPod(const std::string& name, const std::string& group, int n, int devices = 16) {
  json p = Pod(name, kDev, devices);
  p["metadata"]["labels"] = {{"neuron.aws.com/pod-group", group},
                             {"neuron.aws.com/ultraserver-nodes", std::to_string(n)}};
  return p;
}

// A LeaderWorkerSet pod as LWS makes it for AWS's UltraServer template.
inline json LwsPod(const std::string& name, const std::string& group_key, int size,
                   const std::string& topology) {
  json p = Pod(name, kDev, 16);
  p["metadata"]["labels"] = {{"leaderworkerset.sigs.k8s.io/name", "lws"},
                             {"leaderworkerset.sigs.k8s.io/group-key", group_key}};
  p["metadata"]["annotations"] = {{"leaderworkerset.sigs.k8s.io/size", std::to_string(size)},
                                  {"leaderworkerset.sigs.k8s.io/exclusive-topology", topology}};
  return p;
}

}  // namespace neuron::extender::testutil
