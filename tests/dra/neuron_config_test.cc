// The opaque NeuronConfig of a claim: AWS's documented form parses; everything else is an
// InvalidArgument whose message says what is wrong.
#include "lib/dra/neuron_config.h"

#include <catch2/catch.hpp>
#include <string>

namespace neuron::dra {
namespace {

std::string Error(std::string_view in) {
  absl::StatusOr<NeuronConfig> c = ParseNeuronConfig(in);
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(c.status().message());
}

TEST_CASE("AWS's documented NeuronConfig parses") {
  for (int lnc : {1, 2}) {
    const std::string in = R"({"apiVersion": "neuron.aws.com/v1", "kind": "NeuronConfig",
        "logicalNeuronCore": )" +
                           std::to_string(lnc) + "}";
    absl::StatusOr<NeuronConfig> c = ParseNeuronConfig(in);
    REQUIRE(c.ok());
    CHECK(c->logical_neuron_core == lnc);
  }
}

TEST_CASE("without logicalNeuronCore the node's LNC stays") {
  absl::StatusOr<NeuronConfig> c =
      ParseNeuronConfig(R"({"kind":"NeuronConfig","apiVersion":"neuron.aws.com/v1"})");
  REQUIRE(c.ok());
  CHECK_FALSE(c->logical_neuron_core.has_value());
}

TEST_CASE("wrong values name the field and the value") {
  const std::string head = R"({"apiVersion": "neuron.aws.com/v1", "kind": "NeuronConfig", )";
  CHECK_THAT(Error(head + R"("logicalNeuronCore": 4})"),
             Catch::Contains("logicalNeuronCore must be 1 or 2, got 4"));
  CHECK_THAT(Error(head + R"("logicalNeuronCore": "2"})"), Catch::Contains("got \"2\""));
  CHECK_THAT(Error(head + R"("logicalNeuronCore": 1.0})"), Catch::Contains("got 1.0"));
  CHECK_THAT(Error(head + R"("logicalNeuronCore": null})"), Catch::Contains("got null"));
  CHECK_THAT(Error(head + R"("logicalNeuronCore": 0})"), Catch::Contains("1 or 2"));
  CHECK_THAT(Error(head + R"("logicalNeuronCore": 99999999999999999999})"),
             Catch::Contains("1 or 2"));
  CHECK_THAT(Error(head + R"("logicalNeuronCore": 1, "logicalNeuronCore": 2})"),
             Catch::Contains("duplicate field \"logicalNeuronCore\""));
}

TEST_CASE("unknown fields, other kinds and other versions are refused") {
  CHECK_THAT(Error(R"({"apiVersion": "neuron.aws.com/v1", "kind": "NeuronConfig",
      "logicalNeuronCores": 1})"),
             Catch::Contains("unknown field \"logicalNeuronCores\""));
  CHECK_THAT(Error(R"({"apiVersion": "neuron.aws.com/v1", "kind": "UltraServerConfig",
      "ultraserverMode": 4})"),
             Catch::Contains("UltraServerConfig"));
  CHECK_THAT(Error(R"({"apiVersion": "neuron.aws.com/v1", "kind": "GpuConfig"})"),
             Catch::Contains("kind must be \"NeuronConfig\", got \"GpuConfig\""));
  CHECK_THAT(Error(R"({"apiVersion": "neuron.aws.com/v2", "kind": "NeuronConfig"})"),
             Catch::Contains("apiVersion must be \"neuron.aws.com/v1\""));
  CHECK_THAT(Error(R"({"kind": "NeuronConfig"})"), Catch::Contains("apiVersion is missing"));
  CHECK_THAT(Error(R"({"apiVersion": 1, "kind": "NeuronConfig"})"),
             Catch::Contains("apiVersion must be a string"));
}

TEST_CASE("anything but one JSON object is refused") {
  for (const char* in : {"", "   ", "[]", "1", "\"x\"", "null", "{", "{\"kind\":", "{}{}",
                         "{\"apiVersion\": \"neuron.aws.com/v1\", \"kind\": \"NeuronConfig\"} x",
                         "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}) {
    INFO(in);
    CHECK_FALSE(ParseNeuronConfig(in).ok());
  }
  CHECK_THAT(Error(std::string(100000, '{')), Catch::Contains("NeuronConfig"));
}

std::string OpaqueError(std::string_view in) {
  absl::StatusOr<OpaqueConfig> c = ParseOpaqueConfig(in);
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(c.status().message());
}

TEST_CASE("AWS's UltraServerConfig parses: ultraserverMode is the number of nodes") {
  for (int nodes : {1, 2, 4}) {
    const std::string in = R"({"apiVersion": "neuron.aws.com/v1", "kind": "UltraServerConfig",
        "ultraserverMode": )" +
                           std::to_string(nodes) + "}";
    absl::StatusOr<OpaqueConfig> c = ParseOpaqueConfig(in);
    REQUIRE(c.ok());
    CHECK_FALSE(c->neuron.has_value());
    REQUIRE(c->ultraserver.has_value());
    CHECK(c->ultraserver->ultraserver_mode == nodes);
  }
  absl::StatusOr<OpaqueConfig> lnc = ParseOpaqueConfig(
      R"({"apiVersion": "neuron.aws.com/v1", "kind": "NeuronConfig", "logicalNeuronCore": 1})");
  REQUIRE(lnc.ok());
  CHECK_FALSE(lnc->ultraserver.has_value());
  REQUIRE(lnc->neuron.has_value());
  CHECK(lnc->neuron->logical_neuron_core == 1);
}

TEST_CASE("bad UltraServerConfigs name the field, the value and what is allowed") {
  const std::string head = R"({"apiVersion": "neuron.aws.com/v1", "kind": "UltraServerConfig", )";
  CHECK_THAT(OpaqueError(head + R"("ultraserverMode": 3})"),
             Catch::Contains("ultraserverMode (the nodes in the set) must be 1, 2 or 4, got 3"));
  CHECK_THAT(OpaqueError(head + R"("ultraserverMode": "4"})"), Catch::Contains("got \"4\""));
  CHECK_THAT(OpaqueError(head + R"("ultraserverMode": 4.0})"), Catch::Contains("got 4.0"));
  CHECK_THAT(OpaqueError(head + R"("ultraserverMode": +4})"), Catch::Contains("JSON value"));
  CHECK_THAT(OpaqueError(R"({"apiVersion": "neuron.aws.com/v1", "kind": "UltraServerConfig"})"),
             Catch::Contains("ultraserverMode is missing"));
  CHECK_THAT(OpaqueError(head + R"("ultraserverMode": 4, "logicalNeuronCore": 1})"),
             Catch::Contains("UltraServerConfig: unknown field \"logicalNeuronCore\""));
  CHECK_THAT(OpaqueError(head + R"("ultraserverMode": 4, "ultraServerMode": 4})"),
             Catch::Contains("unknown field \"ultraServerMode\""));
  CHECK_THAT(OpaqueError(head + R"("ultraserverMode": 4, "ultraserverMode": 2})"),
             Catch::Contains("duplicate field \"ultraserverMode\""));
  CHECK_THAT(OpaqueError(R"({"apiVersion": "neuron.aws.com/v1", "kind": "NeuronConfig",
      "ultraserverMode": 4})"),
             Catch::Contains("NeuronConfig: unknown field \"ultraserverMode\""));
  CHECK_THAT(OpaqueError(R"({"apiVersion": "neuron.aws.com/v1", "kind": "GpuConfig"})"),
             Catch::Contains("kind must be \"NeuronConfig\" or \"UltraServerConfig\""));
  CHECK_THAT(OpaqueError(R"({"apiVersion": "neuron.aws.com/v2", "kind": "UltraServerConfig",
      "ultraserverMode": 4})"),
             Catch::Contains("apiVersion must be \"neuron.aws.com/v1\""));
  CHECK_THAT(OpaqueError(R"({"apiVersion": "neuron.aws.com/v1", "ultraserverMode": 4})"),
             Catch::Contains("kind is missing"));
  CHECK_THAT(OpaqueError("[]"), Catch::Contains("parameters must be a JSON object"));
}

}  // namespace
}  // namespace neuron::dra
