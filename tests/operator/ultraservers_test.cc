// File: tests/operator/ultraservers_test.cc
// status.ultraServers from Node labels (UltraServersStatus, pure) and ComputeStatus writing or
// dropping it.
#include "lib/operator/ultraservers.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "lib/operator/status.h"
#include "nlohmann/json.hpp"

namespace neuron::op {
namespace {

using nlohmann::json;

json Node(const std::string& name, const json& labels) {
  return {{"metadata", {{"name", name}, {"labels", labels}}}};
}

json UsNode(const std::string& name, const std::string& server, int node,
            const std::string& modes = "1_2_4") {
  return Node(name, {{"neuron.amazonaws.com/ultraserver-mode", modes},
                     {"neuron.amazonaws.com/ultraserver-server-id-4", server},
                     {"neuron.amazonaws.com/ultraserver-node-id-4", std::to_string(node)},
                     {"kubernetes.io/hostname", name}});
}

std::vector<const json*> Pointers(const std::vector<json>& nodes) {
  std::vector<const json*> out;
  for (const json& n : nodes) out.push_back(&n);
  return out;
}

TEST_CASE("UltraServers are grouped by server-id-4, nodes ordered by node-id-4",
          "[operator][status]") {
  const std::vector<json> nodes = {
      UsNode("c", "bbbb", 2),
      UsNode("a", "bbbb", 0, "1_4"),
      UsNode("z", "aaaa", 1),
      UsNode("d", "bbbb", 3),
      UsNode("b", "bbbb", 1),
      Node("mode-only", {{"neuron.amazonaws.com/ultraserver-mode", "1_2_4"}}),
      UsNode("bad-id", "not an id!", 0),
      Node("trn1", {{"kubernetes.io/hostname", "trn1"}}),
  };
  const json s = UltraServersStatus(Pointers(nodes));
  CHECK(s == json{{"count", 2},
                  {"servers",
                   {{{"id", "aaaa"}, {"nodes", {"z"}}, {"modes", "1_2_4"}},
                    {{"id", "bbbb"}, {"nodes", {"a", "b", "c", "d"}}, {"modes", "1_4"}}}},
                  {"nodesWithoutServerId", 2}});
}

TEST_CASE("no UltraServer labels: no ultraServers", "[operator][status]") {
  const std::vector<json> nodes = {Node("trn1", {{"kubernetes.io/hostname", "trn1"}}),
                                   Node("bare", json::object()), json::object()};
  CHECK(UltraServersStatus(Pointers(nodes)).is_null());
  CHECK(UltraServersStatus({}).is_null());
}

TEST_CASE("ComputeStatus writes ultraServers when seen and drops it after", "[operator][status]") {
  DeviceConfig dc;
  dc.name = "neuron";
  dc.ns = "ns";
  ObservedState seen;
  const std::vector<json> nodes = {UsNode("a", "aaaa", 0)};
  seen.ultra_servers = UltraServersStatus(Pointers(nodes));
  const absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  json status = ComputeStatus(dc, seen, json::object(), now);
  CHECK(status.at("ultraServers").at("count") == 1);
  seen.ultra_servers = nullptr;
  status = ComputeStatus(dc, seen, status, now);
  CHECK_FALSE(status.contains("ultraServers"));
}

}  // namespace
}  // namespace neuron::op
