// File: tests/dra/dra_grpc_test.cc
// NodePrepareResources / NodeUnprepareResources in both API versions through the real wire
// protocol: translation to and from the ClaimPreparer, per-claim errors, and bad input.
#include <catch2/catch.hpp>
#include <thread>

#include "lib/dra/kubelet_plugin.h"
#include "tests/dra/grpc_test_util.h"
#include "tests/fakes/kubelet/dra_fake_kubelet.h"

namespace neuron::dra {
namespace {

using fakes::DraApi;
using fakes::DraClaim;
using fakes::FakeDraKubelet;
using testing::OptionsFor;
using testing::RunningPlugin;
using testing::ScriptedPreparer;

constexpr char kGrpcDriver[] = "neuron.aws.com";

// Starts the fake kubelet first, so that it sees the plugin's registration socket appear.
KubeletPluginOptions StartedKubelet(FakeDraKubelet& kubelet) {
  const absl::Status s = kubelet.Start();
  REQUIRE(s.ok());
  return OptionsFor(kubelet);
}

// One registered plugin with a scripted preparer.
struct Fixture {
  Fixture() : running(StartedKubelet(kubelet), preparer) {
    REQUIRE(kubelet.WaitForRegistrations(1, absl::Seconds(10)));
  }
  FakeDraKubelet kubelet;
  ScriptedPreparer preparer;
  RunningPlugin running;
};

TEST_CASE("both API versions carry devices, pools and CDI IDs", "[dra][grpc]") {
  Fixture f;
  f.preparer.Script("uid-a",
                    std::vector<PreparedDevice>{
                        {{"neurons"}, "node-a", "neurondevice3", {"neuron.aws.com/device=3"}},
                        {{"neurons", "more"},
                         "node-a",
                         "neurondevice4",
                         {"neuron.aws.com/device=4", "neuron.aws.com/link=4"}},
                    });
  const DraApi api = GENERATE(DraApi::kV1, DraApi::kV1beta1);
  CAPTURE(api == DraApi::kV1 ? "v1" : "v1beta1");

  auto prepared = f.kubelet.NodePrepareResources(kGrpcDriver, {{"team", "claim-a", "uid-a"}}, api);
  REQUIRE(prepared.ok());
  const fakes::DraPrepared& a = prepared->at("uid-a");
  CHECK(a.error.empty());
  REQUIRE(a.devices.size() == 2);
  CHECK(a.devices[0].request_names == std::vector<std::string>{"neurons"});
  CHECK(a.devices[0].pool == "node-a");
  CHECK(a.devices[0].device == "neurondevice3");
  CHECK(a.devices[0].cdi_device_ids == std::vector<std::string>{"neuron.aws.com/device=3"});
  CHECK(a.devices[1].request_names == std::vector<std::string>{"neurons", "more"});
  CHECK(a.devices[1].cdi_device_ids.size() == 2);

  const auto calls = f.preparer.prepare_calls();
  REQUIRE(calls.size() == 1);
  REQUIRE(calls[0].size() == 1);
  CHECK(calls[0][0].ns == "team");
  CHECK(calls[0][0].name == "claim-a");
  CHECK(calls[0][0].uid == "uid-a");

  auto unprepared =
      f.kubelet.NodeUnprepareResources(kGrpcDriver, {{"team", "claim-a", "uid-a"}}, api);
  REQUIRE(unprepared.ok());
  CHECK(unprepared->at("uid-a").empty());
  REQUIRE(f.preparer.unprepare_calls().size() == 1);
}

TEST_CASE("a failing claim gets its own error and the others their devices", "[dra][grpc]") {
  Fixture f;
  f.preparer.Script("uid-bad", absl::ResourceExhaustedError("neurondevice2 is held by ns/other"));
  const DraApi api = GENERATE(DraApi::kV1, DraApi::kV1beta1);
  auto prepared = f.kubelet.NodePrepareResources(
      kGrpcDriver, {{"ns", "good", "uid-good"}, {"ns", "bad", "uid-bad"}}, api);
  REQUIRE(prepared.ok());
  CHECK(prepared->at("uid-good").error.empty());
  CHECK(prepared->at("uid-good").devices.size() == 1);
  CHECK(prepared->at("uid-bad").error == "neurondevice2 is held by ns/other");
  CHECK(prepared->at("uid-bad").devices.empty());

  f.preparer.ScriptUnprepare("uid-bad", absl::InternalError("cannot remove CDI spec"));
  auto unprepared = f.kubelet.NodeUnprepareResources(
      kGrpcDriver, {{"ns", "good", "uid-good"}, {"ns", "bad", "uid-bad"}}, api);
  REQUIRE(unprepared.ok());
  CHECK(unprepared->at("uid-good").empty());
  CHECK(unprepared->at("uid-bad") == "cannot remove CDI spec");
}

TEST_CASE("a claim the preparer leaves out is answered as failed, never skipped", "[dra][grpc]") {
  Fixture f;
  f.preparer.Script("uid-x", ScriptedPreparer::Omit());
  f.preparer.ScriptUnprepare("uid-x", ScriptedPreparer::Omit());
  // The kubelet fails the whole call for a skipped claim; the plugin must not skip any.
  auto prepared = f.kubelet.NodePrepareResources(kGrpcDriver, {{"ns", "x", "uid-x"}});
  REQUIRE(prepared.ok());
  CHECK(prepared->at("uid-x").error == "internal error: claim was not prepared");
  auto unprepared = f.kubelet.NodeUnprepareResources(kGrpcDriver, {{"ns", "x", "uid-x"}});
  REQUIRE(unprepared.ok());
  CHECK(unprepared->at("uid-x") == "internal error: claim was not unprepared");
}

TEST_CASE("incomplete and repeated claims do not reach the preparer", "[dra][grpc]") {
  Fixture f;
  const DraApi api = GENERATE(DraApi::kV1, DraApi::kV1beta1);
  auto prepared = f.kubelet.NodePrepareResources(
      kGrpcDriver, {{"", "no-namespace", "uid-1"}, {"ns", "ok", "uid-2"}, {"ns", "ok", "uid-2"}},
      api);
  REQUIRE(prepared.ok());
  CHECK_THAT(prepared->at("uid-1").error, Catch::Contains("lacks namespace, name or uid"));
  CHECK(prepared->at("uid-2").error.empty());
  const auto calls = f.preparer.prepare_calls();
  REQUIRE(calls.size() == 1);
  REQUIRE(calls[0].size() == 1);  // uid-2 once; uid-1 never
  CHECK(calls[0][0].uid == "uid-2");

  auto no_uid = f.kubelet.NodePrepareResources(kGrpcDriver, {{"ns", "c", ""}}, api);
  REQUIRE(no_uid.ok());
  CHECK_THAT(no_uid->at("").error, Catch::Contains("lacks namespace, name or uid"));
  CHECK(f.preparer.prepare_calls().size() == 1);  // preparer not called for nothing

  auto empty = f.kubelet.NodePrepareResources(kGrpcDriver, {}, api);
  REQUIRE(empty.ok());
  CHECK(empty->empty());
}

TEST_CASE("concurrent calls in both versions are all answered", "[dra][grpc]") {
  Fixture f;
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      const std::string uid = "uid-" + std::to_string(i);
      auto r = f.kubelet.NodePrepareResources(kGrpcDriver, {{"ns", "c", uid}},
                                              i % 2 ? DraApi::kV1 : DraApi::kV1beta1);
      if (r.ok() && r->at(uid).error.empty()) ok.fetch_add(1);
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(ok.load() == 8);
}

}  // namespace
}  // namespace neuron::dra
