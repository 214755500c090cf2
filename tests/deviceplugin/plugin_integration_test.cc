// File: tests/deviceplugin/plugin_integration_test.cc
// The plugin endpoints against the fake kubelet on real unix sockets: registration, the
// kubelet's dial-back, ListAndWatch updates, GetPreferredAllocation/Allocate on every shape,
// bad input, kubelet restarts and an absent kubelet.
#include <grpcpp/grpcpp.h>

#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "catch2/catch.hpp"
#include "lib/deviceplugin/plugin_manager.h"
#include "lib/deviceplugin/plugin_server.h"
#include "proto/deviceplugin/v1beta1/api.grpc.pb.h"
#include "tests/deviceplugin/fake_device_source.h"
#include "tests/fakes/kubelet/fake_kubelet.h"

namespace neuron::deviceplugin {
namespace {

using testing::FakeDeviceSource;
using testing::SnapshotForShape;

constexpr absl::Duration kWait = absl::Seconds(10);

// Both endpoints of one node plus a manager running on its own thread.
class PluginHarness {
 public:
  PluginHarness(fakes::FakeKubelet& kubelet, const NodeSnapshot& snap)
      : source_(snap),
        dev_alloc_(assignment::ResourceKind::kDevice),
        core_alloc_(assignment::ResourceKind::kCore),
        dev_(dev_alloc_, source_, nullptr, kubelet.dir() + "/aws-neuron.sock"),
        core_(core_alloc_, source_, nullptr, kubelet.dir() + "/aws-neuroncore.sock"),
        manager_({&dev_, &core_}, Options(kubelet.dir())) {
    source_.Subscribe([this] {
      dev_.NotifyChanged();
      core_.NotifyChanged();
    });
    thread_ = std::thread([this] { status_ = manager_.Run(stop_); });
  }
  ~PluginHarness() {
    stop_.Notify();
    thread_.join();
  }
  FakeDeviceSource& source() { return source_; }
  PluginManager& manager() { return manager_; }
  const absl::Status& status() const { return status_; }

 private:
  static ManagerOptions Options(const std::string& dir) {
    ManagerOptions o;
    o.plugin_dir = dir;
    o.backoff.initial = absl::Milliseconds(20);
    o.backoff.max = absl::Milliseconds(200);
    return o;
  }

  FakeDeviceSource source_;
  Allocator dev_alloc_, core_alloc_;
  PluginServer dev_, core_;
  PluginManager manager_;
  absl::Notification stop_;
  absl::Status status_;
  std::thread thread_;
};

int Healthy(const v1beta1::ListAndWatchResponse& r) {
  int n = 0;
  for (const auto& d : r.devices()) n += d.health() == "Healthy";
  return n;
}

v1beta1::AllocateRequest AllocReq(const std::vector<std::string>& ids) {
  v1beta1::AllocateRequest req;
  auto* c = req.add_container_requests();
  for (const auto& id : ids) c->add_devices_ids(id);
  return req;
}

TEST_CASE("Plugin serves, registers and lists devices with NUMA topology", "[integration]") {
  fakes::FakeKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  PluginHarness h(kubelet, SnapshotForShape(*topology::FindShape("trn1.32xlarge")));
  REQUIRE(kubelet.WaitForRegistrations(2, kWait));
  for (const auto& reg : kubelet.registrations()) {
    CHECK(reg.version() == "v1beta1");
    CHECK(reg.options().get_preferred_allocation_available());
    CHECK((reg.endpoint() == "aws-neuron.sock" || reg.endpoint() == "aws-neuroncore.sock"));
  }
  auto opts = kubelet.options("aws.amazon.com/neuron");
  REQUIRE(opts.has_value());
  CHECK(opts->get_preferred_allocation_available());
  REQUIRE(kubelet.WaitForDevices(
      "aws.amazon.com/neuroncore", [](const auto& r) { return r.devices_size() == 32; }, kWait));
  REQUIRE(kubelet.WaitForDevices(
      "aws.amazon.com/neuron", [](const auto& r) { return r.devices_size() == 16; }, kWait));
  auto list = *kubelet.LatestDevices("aws.amazon.com/neuron");
  CHECK(Healthy(list) == 16);
  CHECK(list.devices(0).topology().nodes(0).id() == 0);
  CHECK(list.devices(15).topology().nodes(0).id() == 1);
}

TEST_CASE("Devices without a NUMA node carry no TopologyInfo", "[integration]") {
  fakes::FakeKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  NodeSnapshot snap = SnapshotForShape(*topology::FindShape("inf2.xlarge"));
  snap.devices[0].numa_node = -1;
  PluginHarness h(kubelet, snap);
  REQUIRE(kubelet.WaitForDevices(
      "aws.amazon.com/neuron", [](const auto& r) { return r.devices_size() == 1; }, kWait));
  CHECK_FALSE(kubelet.LatestDevices("aws.amazon.com/neuron")->devices(0).has_topology());
}

TEST_CASE("ListAndWatch sends a new full list on health changes", "[integration]") {
  fakes::FakeKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  PluginHarness h(kubelet, SnapshotForShape(*topology::FindShape("inf2.48xlarge")));
  REQUIRE(kubelet.WaitForDevices(
      "aws.amazon.com/neuroncore", [](const auto& r) { return Healthy(r) == 24; }, kWait));
  h.source().SetHealthy(5, false);
  REQUIRE(kubelet.WaitForDevices(
      "aws.amazon.com/neuron", [](const auto& r) { return Healthy(r) == 11; }, kWait));
  REQUIRE(kubelet.WaitForDevices(
      "aws.amazon.com/neuroncore", [](const auto& r) { return Healthy(r) == 22; }, kWait));
  auto cores = *kubelet.LatestDevices("aws.amazon.com/neuroncore");
  CHECK(cores.devices_size() == 24);  // capacity unchanged; cores 10, 11 unhealthy
  CHECK(cores.devices(10).health() == "Unhealthy");
  CHECK(cores.devices(11).health() == "Unhealthy");
  h.source().SetHealthy(5, true);
  REQUIRE(kubelet.WaitForDevices(
      "aws.amazon.com/neuron", [](const auto& r) { return Healthy(r) == 12; }, kWait));
}

TEST_CASE("GetPreferredAllocation and Allocate on every shape", "[integration]") {
  for (const topology::Shape& shape : topology::AllShapes()) {
    INFO(shape.instance_type);
    fakes::FakeKubelet kubelet;
    REQUIRE(kubelet.Start().ok());
    PluginHarness h(kubelet, SnapshotForShape(shape));
    REQUIRE(kubelet.WaitForRegistrations(2, kWait));
    for (const char* resource : {"aws.amazon.com/neuron", "aws.amazon.com/neuroncore"}) {
      REQUIRE(kubelet.WaitForDevices(
          resource, [](const auto& r) { return r.devices_size() > 0; }, kWait));
      const auto list = *kubelet.LatestDevices(resource);
      v1beta1::PreferredAllocationRequest req;
      auto* c = req.add_container_requests();
      for (const auto& d : list.devices()) c->add_available_deviceids(d.id());
      c->set_allocation_size(list.devices_size() >= 2 ? 2 : 1);
      auto pref = kubelet.GetPreferredAllocation(resource, req);
      REQUIRE(pref.ok());
      REQUIRE(pref->container_responses_size() == 1);
      const auto& ids = pref->container_responses(0).deviceids();
      CHECK(ids.size() == c->allocation_size());
      auto alloc = kubelet.Allocate(resource, AllocReq({ids.begin(), ids.end()}));
      REQUIRE(alloc.ok());
      const auto& cr = alloc->container_responses(0);
      CHECK(cr.devices_size() >= 1);
      CHECK(cr.envs().count("NEURON_RT_VISIBLE_CORES") == 1);
      for (const auto& spec : cr.devices()) {
        CHECK(spec.container_path().rfind("/dev/neuron", 0) == 0);
        CHECK(spec.host_path() == spec.container_path());
        CHECK(spec.permissions() == "rw");
      }
    }
  }
}

TEST_CASE("Bad requests get InvalidArgument and the plugin keeps serving", "[integration]") {
  fakes::FakeKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  PluginHarness h(kubelet, SnapshotForShape(*topology::FindShape("inf2.24xlarge")));
  REQUIRE(kubelet.WaitForRegistrations(2, kWait));
  const std::string res = "aws.amazon.com/neuron";
  auto expect_invalid = [&](const absl::Status& s, const char* needle) {
    INFO(s.ToString());
    CHECK(absl::IsInvalidArgument(s));
    CHECK(std::string(s.message()).find(needle) != std::string::npos);
  };
  expect_invalid(kubelet.Allocate(res, AllocReq({})).status(), "empty");
  expect_invalid(kubelet.Allocate(res, AllocReq({"17"})).status(), "unknown");
  expect_invalid(kubelet.Allocate(res, AllocReq({"1", "1"})).status(), "duplicate");
  expect_invalid(kubelet.Allocate(res, v1beta1::AllocateRequest()).status(), "container_requests");
  v1beta1::PreferredAllocationRequest big;
  auto* c = big.add_container_requests();
  c->add_available_deviceids("0");
  c->add_available_deviceids("1");
  c->set_allocation_size(5);
  expect_invalid(kubelet.GetPreferredAllocation(res, big).status(), "exceeds");
  // Still serving.
  auto ok = kubelet.Allocate(res, AllocReq({"0", "1"}));
  REQUIRE(ok.ok());
  CHECK(ok->container_responses(0).devices_size() == 2);
  CHECK(kubelet.StreamOpen(res));
}

TEST_CASE("Re-registers after 20 kubelet restarts in a row", "[integration]") {
  fakes::FakeKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  PluginHarness h(kubelet, SnapshotForShape(*topology::FindShape("trn1.2xlarge")));
  REQUIRE(kubelet.WaitForRegistrations(2, kWait));
  for (int i = 1; i <= 20; ++i) {
    INFO("restart " << i);
    const int before = kubelet.registration_count();
    REQUIRE(kubelet.Restart().ok());
    // Both endpoints register again (the inotify path makes this well under a second; the
    // generous timeout keeps the test free of timing assertions).
    REQUIRE(kubelet.WaitForRegistrations(before + 2, kWait));
    REQUIRE(kubelet.WaitForDevices(
        "aws.amazon.com/neuroncore", [](const auto& r) { return r.devices_size() == 2; }, kWait));
    auto alloc = kubelet.Allocate("aws.amazon.com/neuroncore", AllocReq({"1"}));
    REQUIRE(alloc.ok());
  }
  // The kubelet counts a registration before the plugin's Register call has returned: let the
  // manager's own count catch up.
  const absl::Time deadline = absl::Now() + kWait;
  while (h.manager().registrations() < 42 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  CHECK(h.manager().registrations() >= 42);
}

TEST_CASE("Kubelet absent at start: registers once it appears", "[integration]") {
  fakes::FakeKubelet kubelet;  // directory exists, kubelet.sock does not
  PluginHarness h(kubelet, SnapshotForShape(*topology::FindShape("inf1.6xlarge")));
  CHECK(kubelet.registration_count() == 0);
  REQUIRE(kubelet.Start().ok());
  REQUIRE(kubelet.WaitForRegistrations(2, kWait));
  REQUIRE(kubelet.WaitForDevices(
      "aws.amazon.com/neuroncore", [](const auto& r) { return r.devices_size() == 16; }, kWait));
}

TEST_CASE("Kubelet rejects an invalid registration like the real one", "[integration]") {
  fakes::FakeKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  auto stub = v1beta1::Registration::NewStub(
      grpc::CreateChannel("unix:" + kubelet.kubelet_socket(), grpc::InsecureChannelCredentials()));
  auto call = [&](const std::string& version, const std::string& resource) {
    v1beta1::RegisterRequest req;
    req.set_version(version);
    req.set_endpoint("x.sock");
    req.set_resource_name(resource);
    grpc::ClientContext ctx;
    v1beta1::Empty resp;
    return stub->Register(&ctx, req, &resp);
  };
  grpc::Status s = call("v1alpha", "aws.amazon.com/neuron");
  CHECK_FALSE(s.ok());
  CHECK(s.error_message().find("not supported") != std::string::npos);
  s = call("v1beta1", "kubernetes.io/neuron");
  CHECK_FALSE(s.ok());
  CHECK(s.error_message().find("extended resource") != std::string::npos);
  CHECK(kubelet.registration_count() == 0);
}

}  // namespace
}  // namespace neuron::deviceplugin
