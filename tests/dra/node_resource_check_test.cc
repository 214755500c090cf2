// File: tests/dra/node_resource_check_test.cc
// The start-up check for DRAExtendedResource's precondition, against the fake apiserver: a node
// that still advertises aws.amazon.com/neuron (a device plugin runs or ran there) is named;
// a clean node and an unreadable one are not errors for the driver.
#include "lib/dra/node_resource_check.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "lib/k8s/transport.h"
#include "nlohmann/json.hpp"
#include "tests/fakes/apiserver/fake_apiserver.h"

namespace neuron::dra {
namespace {

using nlohmann::json;

json NodeWith(const std::string& name, const json& allocatable) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}}},
          {"status", {{"capacity", allocatable}, {"allocatable", allocatable}}}};
}

TEST_CASE("a node that still advertises Neuron extended resources is named", "[dra]") {
  fakes::FakeApiServer fake;
  REQUIRE(fake.Start().ok());
  k8s::ClientConfig cfg;
  cfg.server = fake.url();
  auto transport = k8s::NewHttpTransport(cfg);
  REQUIRE(transport.ok());
  k8s::RestClient client(*transport);
  // What the kubelet leaves after the device plugin stopped: the names, at 0 allocatable.
  REQUIRE(fake.Put("/api/v1/nodes/plugin-ran",
                   NodeWith("plugin-ran", {{"cpu", "8"},
                                           {"aws.amazon.com/neuron", "0"},
                                           {"aws.amazon.com/neuroncore", "0"}}))
              .ok());
  REQUIRE(fake.Put("/api/v1/nodes/clean", NodeWith("clean", {{"cpu", "8"}})).ok());

  auto found = CheckNodeResources(client, "plugin-ran");
  REQUIRE(found.ok());
  CHECK(*found == std::vector<std::string>{"aws.amazon.com/neuron", "aws.amazon.com/neuroncore"});
  auto none = CheckNodeResources(client, "clean");
  REQUIRE(none.ok());
  CHECK(none->empty());
  CHECK(absl::IsNotFound(CheckNodeResources(client, "missing").status()));
  // Odd shapes are read as "nothing advertised", never a crash.
  CHECK(AdvertisedNeuronResources(json::array()).empty());
  CHECK(AdvertisedNeuronResources({{"status", "x"}}).empty());
  CHECK(AdvertisedNeuronResources({{"status", {{"capacity", 3}}}}).empty());
}

}  // namespace
}  // namespace neuron::dra
