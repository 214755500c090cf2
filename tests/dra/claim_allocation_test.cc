// Reading a ResourceClaim's allocation as the API server returns it (v1 shape): only our
// driver's results in our pool, NeuronConfig precedence, and every malformed input as an error.
#include "lib/dra/claim_allocation.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace neuron::dra {
namespace {

using nlohmann::json;

constexpr char kAllocationUid[] = "8d1f0c62-1b2a-4c3d-9e8f-0a1b2c3d4e5f";
constexpr char kDriver[] = "neuron.aws.com";
constexpr char kPool[] = "node-a";

json Result(const std::string& request, const std::string& device, const std::string& pool = kPool,
            const std::string& driver = kDriver) {
  return {{"request", request}, {"driver", driver}, {"pool", pool}, {"device", device}};
}

json Lnc(int lnc, json requests = json::array(), const std::string& source = "FromClaim") {
  return {{"source", source},
          {"requests", std::move(requests)},
          {"opaque",
           {{"driver", kDriver},
            {"parameters",
             {{"apiVersion", "neuron.aws.com/v1"},
              {"kind", "NeuronConfig"},
              {"logicalNeuronCore", lnc}}}}}};
}

// Lists as vectors, not json: `{Result(...)}` as a json parameter is an array under GCC but a copy
// of the one element under clang (CWG 2137), so a one-element list would lose its brackets.
json Claim(std::vector<json> results, std::vector<json> config = {}) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaim"},
          {"metadata", {{"name", "c"}, {"namespace", "ml"}, {"uid", kAllocationUid}}},
          {"status",
           {{"allocation",
             {{"devices", {{"results", std::move(results)}, {"config", std::move(config)}}}}}}}};
}

TEST_CASE("device names: whole devices and core partitions only", "[dra][claim]") {
  CHECK(*ParseDeviceName("neurondevice0") == DeviceRef{0, std::nullopt});
  CHECK(*ParseDeviceName("neurondevice15-core3") == DeviceRef{15, 3});
  CHECK(*ParseDeviceName("neuronnode") == DeviceRef{0, std::nullopt, true});
  for (const char* bad :
       {"", "neurondevice", "neurondevice-1", "neurondevice01", "neurondevice3-",
        "neurondevice3-core", "neurondevice3-core01", "neurondevice3x", "gpu0",
        "neurondevice99999999", "neurondevice3-core1-core2", "neuronnode0", "neuronnode-core1"}) {
    INFO(bad);
    CHECK(absl::IsInvalidArgument(ParseDeviceName(bad).status()));
  }
}

TEST_CASE("only our driver's results in our pool are ours", "[dra][claim]") {
  const json claim =
      Claim({Result("a", "neurondevice2"), Result("a", "dev0", kPool, "gpu.example"),
             Result("b", "neurondevice1", "node-b"), Result("b", "neurondevice3-core1")});
  auto alloc = ReadClaimAllocation(claim, kAllocationUid, kDriver, kPool);
  REQUIRE(alloc.ok());
  REQUIRE(alloc->devices.size() == 2);
  CHECK(alloc->devices[0] == AllocatedDevice{"a", "neurondevice2", {2, std::nullopt}, false});
  CHECK(alloc->devices[1] == AllocatedDevice{"b", "neurondevice3-core1", {3, 1}, false});
  CHECK_FALSE(alloc->logical_neuron_core.has_value());
}

TEST_CASE("claim config overrides class config; request lists narrow it", "[dra][claim]") {
  SECTION("last applicable wins") {
    const json claim = Claim({Result("r", "neurondevice0")},
                             {Lnc(1, json::array(), "FromClass"), Lnc(2, json::array())});
    CHECK(ReadClaimAllocation(claim, kAllocationUid, kDriver, kPool)->logical_neuron_core == 2);
  }
  SECTION("a config for another request does not apply") {
    const json claim = Claim({Result("r", "neurondevice0")}, {Lnc(2, {"other"})});
    CHECK_FALSE(ReadClaimAllocation(claim, kAllocationUid, kDriver, kPool)->logical_neuron_core);
  }
  SECTION("a config for the parent request applies to its subrequests") {
    const json claim = Claim({Result("r/big", "neurondevice0")}, {Lnc(2, {"r"})});
    CHECK(ReadClaimAllocation(claim, kAllocationUid, kDriver, kPool)->logical_neuron_core == 2);
  }
  SECTION("another driver's opaque config is not ours to read") {
    json other = Lnc(7);
    other["opaque"]["driver"] = "gpu.example";
    const json claim = Claim({Result("r", "neurondevice0")}, {other});
    CHECK(ReadClaimAllocation(claim, kAllocationUid, kDriver, kPool).ok());
  }
  SECTION("requests of one claim must agree on LNC") {
    const json claim =
        Claim({Result("a", "neurondevice0"), Result("b", "neurondevice1")}, {Lnc(2, {"a"})});
    auto alloc = ReadClaimAllocation(claim, kAllocationUid, kDriver, kPool);
    CHECK(absl::IsInvalidArgument(alloc.status()));
    CHECK(alloc.status().message().find("different logicalNeuronCore") != std::string::npos);
  }
}

TEST_CASE("bad claims are clear errors", "[dra][claim]") {
  SECTION("recreated claim") {
    auto a =
        ReadClaimAllocation(Claim({Result("r", "neurondevice0")}), "other-uid", kDriver, kPool);
    CHECK(absl::IsFailedPrecondition(a.status()));
    CHECK(a.status().message().find("deleted and recreated") != std::string::npos);
  }
  SECTION("not allocated") {
    json claim = Claim({});
    claim["status"] = json::object();
    CHECK(absl::IsFailedPrecondition(
        ReadClaimAllocation(claim, kAllocationUid, kDriver, kPool).status()));
  }
  SECTION("nothing of ours here") {
    auto a = ReadClaimAllocation(Claim({Result("r", "neurondevice0", "node-b")}), kAllocationUid,
                                 kDriver, kPool);
    CHECK(absl::IsFailedPrecondition(a.status()));
  }
  SECTION("a device name we never publish") {
    auto a = ReadClaimAllocation(Claim({Result("r", "gpu0")}), kAllocationUid, kDriver, kPool);
    CHECK(absl::IsInvalidArgument(a.status()));
  }
  SECTION("an invalid NeuronConfig names the request and the problem") {
    json cfg = Lnc(3);
    auto a = ReadClaimAllocation(Claim({Result("r", "neurondevice0")}, {cfg}), kAllocationUid,
                                 kDriver, kPool);
    CHECK(absl::IsInvalidArgument(a.status()));
    CHECK(a.status().message().find("request \"r\"") != std::string::npos);
    CHECK(a.status().message().find("1 or 2") != std::string::npos);
    cfg["opaque"]["parameters"]["extra"] = true;
    cfg["opaque"]["parameters"]["logicalNeuronCore"] = 1;
    a = ReadClaimAllocation(Claim({Result("r", "neurondevice0")}, {cfg}), kAllocationUid, kDriver,
                            kPool);
    CHECK(a.status().message().find("unknown field") != std::string::npos);
  }
  SECTION("wrong types anywhere never throw") {
    for (const json& junk :
         {json(nullptr), json(42), json::array({1, 2}), json{{"metadata", 1}, {"status", "x"}},
          Claim({json(1), json{{"driver", kDriver}, {"pool", kPool}}})}) {
      CHECK_FALSE(ReadClaimAllocation(junk, kAllocationUid, kDriver, kPool).ok());
    }
  }
}

json UltraServer(int nodes, json requests = json::array()) {
  return {{"source", "FromClaim"},
          {"requests", std::move(requests)},
          {"opaque",
           {{"driver", kDriver},
            {"parameters",
             {{"apiVersion", "neuron.aws.com/v1"},
              {"kind", "UltraServerConfig"},
              {"ultraserverMode", nodes}}}}}};
}

TEST_CASE("AWS's us-and-lnc-config: UltraServerConfig and NeuronConfig on the node device",
          "[dra][claim]") {
  const json claim =
      Claim({Result("neurons", "neuronnode")}, {UltraServer(2, {"neurons"}), Lnc(1, {"neurons"})});
  auto alloc = ReadClaimAllocation(claim, kAllocationUid, kDriver, kPool);
  REQUIRE(alloc.ok());
  REQUIRE(alloc->devices.size() == 1);
  CHECK(alloc->devices[0].ref.node);
  CHECK(alloc->ultraserver_set == 2);
  CHECK(alloc->logical_neuron_core == 1);
  // The later entry of a kind wins, as for NeuronConfig.
  auto later = ReadClaimAllocation(
      Claim({Result("neurons", "neuronnode")}, {UltraServer(2), UltraServer(4, {"neurons"})}),
      kAllocationUid, kDriver, kPool);
  REQUIRE(later.ok());
  CHECK(later->ultraserver_set == 4);
  // Without UltraServerConfig the node device is just the whole node.
  auto plain =
      ReadClaimAllocation(Claim({Result("neurons", "neuronnode")}), kAllocationUid, kDriver, kPool);
  REQUIRE(plain.ok());
  CHECK_FALSE(plain->ultraserver_set.has_value());
}

TEST_CASE("UltraServerConfig on an ordinary device or differing between requests is refused",
          "[dra][claim]") {
  auto on_device = ReadClaimAllocation(Claim({Result("a", "neurondevice2")}, {UltraServer(4)}),
                                       kAllocationUid, kDriver, kPool);
  REQUIRE(absl::IsInvalidArgument(on_device.status()));
  CHECK_THAT(std::string(on_device.status().message()),
             Catch::Contains("applies only to the UltraServer node device (resourceType "
                             "neuron_node)"));
  auto differ = ReadClaimAllocation(Claim({Result("a", "neuronnode"), Result("b", "neuronnode")},
                                          {UltraServer(4, {"a"}), UltraServer(2, {"b"})}),
                                    kAllocationUid, kDriver, kPool);
  REQUIRE(absl::IsInvalidArgument(differ.status()));
  CHECK_THAT(std::string(differ.status().message()),
             Catch::Contains("different UltraServerConfig ultraserverMode values"));
  auto bad = ReadClaimAllocation(Claim({Result("a", "neuronnode")}, {UltraServer(3)}),
                                 kAllocationUid, kDriver, kPool);
  REQUIRE(absl::IsInvalidArgument(bad.status()));
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("config for request \"a\": UltraServerConfig: ultraserverMode"));
}

}  // namespace
}  // namespace neuron::dra
