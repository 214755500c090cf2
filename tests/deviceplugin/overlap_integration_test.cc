// File: tests/deviceplugin/overlap_integration_test.cc
// aws.amazon.com/neuron and aws.amazon.com/neuroncore never share silicon: both endpoints with a
// SiliconLedger over the fake kubelet's PodResources, on real unix sockets. Pods are admitted
// through the fake kubelet as the real one does (per-resource accounting, preferred allocation,
// Allocate, then PodResources), in both orders, across a plugin restart and pod removal; and
// the host paths Allocate returns pass the runtime's device check.
#include <sys/stat.h>

#include <set>
#include <thread>

#include "absl/synchronization/notification.h"
#include "catch2/catch.hpp"
#include "lib/deviceplugin/plugin_manager.h"
#include "lib/deviceplugin/plugin_server.h"
#include "lib/deviceplugin/silicon_ledger.h"
#include "tests/deviceplugin/fake_device_source.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/kubelet/fake_kubelet.h"

namespace neuron::deviceplugin {
namespace {

using testing::FakeDeviceSource;
using testing::SnapshotForShape;

constexpr absl::Duration kOverlapWait = absl::Seconds(10);
constexpr char kDev[] = "aws.amazon.com/neuron";
constexpr char kCore[] = "aws.amazon.com/neuroncore";

// Both endpoints of one node with a ledger reading the fake kubelet's PodResources; one
// instance is one run of the plugin process (a new one forgets all in-memory state).
class Plugin {
 public:
  Plugin(fakes::FakeKubelet& kubelet, const NodeSnapshot& snap, Clock& clock,
         const AllocatorOptions& aopts = {})
      : source_(snap),
        ledger_([socket = kubelet.pod_resources_socket()] { return ListPodHoldings(socket); },
                clock),
        dev_alloc_(assignment::ResourceKind::kDevice, aopts),
        core_alloc_(assignment::ResourceKind::kCore, aopts),
        dev_(dev_alloc_, source_, nullptr, kubelet.dir() + "/aws-neuron.sock", {}, &ledger_),
        core_(core_alloc_, source_, nullptr, kubelet.dir() + "/aws-neuroncore.sock", {}, &ledger_),
        manager_({&dev_, &core_}, Options(kubelet.dir())) {
    thread_ = std::thread([this] { status_ = manager_.Run(stop_); });
  }
  ~Plugin() {
    stop_.Notify();
    thread_.join();
  }
  SiliconLedger& ledger() { return ledger_; }

 private:
  static ManagerOptions Options(const std::string& dir) {
    ManagerOptions o;
    o.plugin_dir = dir;
    o.backoff.initial = absl::Milliseconds(20);
    o.backoff.max = absl::Milliseconds(200);
    return o;
  }

  FakeDeviceSource source_;
  SiliconLedger ledger_;
  Allocator dev_alloc_, core_alloc_;
  PluginServer dev_, core_;
  PluginManager manager_;
  absl::Notification stop_;
  absl::Status status_;
  std::thread thread_;
};

// Waits until the kubelet sees `devices` and `cores` IDs (a fresh registration after a restart).
void WaitReady(fakes::FakeKubelet& kubelet, int registrations, int devices, int cores) {
  REQUIRE(kubelet.WaitForRegistrations(registrations, kOverlapWait));
  REQUIRE(kubelet.WaitForDevices(
      kDev, [&](const auto& r) { return r.devices_size() == devices; }, kOverlapWait));
  REQUIRE(kubelet.WaitForDevices(
      kCore, [&](const auto& r) { return r.devices_size() == cores; }, kOverlapWait));
}

// Devices touched by a response (from /dev/neuronN container paths).
std::set<std::string> DevicePaths(const v1beta1::AllocateResponse& r) {
  std::set<std::string> out;
  for (const auto& d : r.container_responses(0).devices()) out.insert(d.container_path());
  return out;
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST_CASE("neuron then neuroncore: the cores of a held device are refused and avoided",
          "[integration][overlap]") {
  fakes::FakeKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  REQUIRE(kubelet.StartPodResources().ok());
  fakes::FakeClock clock;
  AllocatorOptions aopts;
  aopts.device_host_path = "/dev/null";  // pass the runtime check on a host without Neuron
  Plugin plugin(kubelet, SnapshotForShape(*topology::FindShape("trn1.32xlarge")), clock, aopts);
  WaitReady(kubelet, 2, 16, 32);

  auto a = kubelet.Admit({"ml", "a", "main"}, kDev, 1);
  REQUIRE(a.ok());
  const std::vector<std::string> a_dev = kubelet.Held(kDev);
  REQUIRE(a_dev.size() == 1);
  const int d = std::stoi(a_dev[0]);

  // The kubelet (per-resource accounting only) may offer exactly that device's cores.
  auto clash = kubelet.AllocateFor({"ml", "b", "main"}, kCore,
                                   {std::to_string(2 * d), std::to_string(2 * d + 1)});
  REQUIRE_FALSE(clash.ok());
  INFO(clash.status().ToString());
  CHECK(absl::IsFailedPrecondition(clash.status()));
  CHECK(Message(clash.status()).find("pod ml/a") != std::string::npos);
  CHECK(Message(clash.status()).find(kDev) != std::string::npos);
  CHECK(kubelet.Held(kCore).empty());

  // Through GetPreferredAllocation the kubelet picks other silicon.
  auto b = kubelet.Admit({"ml", "b", "main"}, kCore, 2);
  REQUIRE(b.ok());
  for (const std::string& core : kubelet.Held(kCore)) CHECK(std::stoi(core) / 2 != d);
  CHECK(DevicePaths(*b).count("/dev/neuron" + std::to_string(d)) == 0);

  // Held silicon stays advertised and Healthy: the kubelet does its own accounting.
  auto cores = *kubelet.LatestDevices(kCore);
  CHECK(cores.devices_size() == 32);
  for (const auto& c : cores.devices()) CHECK(c.health() == "Healthy");

  // Pod a ends: its device's cores are free again.
  kubelet.RemovePod("ml", "a");
  clock.Advance(absl::Minutes(5));  // past the recent-Allocate window
  auto c = kubelet.AllocateFor({"ml", "c", "main"}, kCore, {std::to_string(2 * d)});
  CHECK(c.ok());
}

TEST_CASE("neuroncore then neuron: a device with a held core is refused and avoided",
          "[integration][overlap]") {
  fakes::FakeKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  REQUIRE(kubelet.StartPodResources().ok());
  fakes::FakeClock clock;
  AllocatorOptions aopts;
  aopts.device_host_path = "/dev/null";
  Plugin plugin(kubelet, SnapshotForShape(*topology::FindShape("inf2.24xlarge")), clock, aopts);
  WaitReady(kubelet, 2, 6, 12);

  REQUIRE(kubelet.Admit({"ml", "a", "main"}, kCore, 1).ok());
  const std::vector<std::string> a_core = kubelet.Held(kCore);
  REQUIRE(a_core.size() == 1);
  const int d = std::stoi(a_core[0]) / 2;

  auto clash = kubelet.AllocateFor({"ml", "b", "main"}, kDev, {std::to_string(d)});
  REQUIRE_FALSE(clash.ok());
  INFO(clash.status().ToString());
  CHECK(Message(clash.status()).find("pod ml/a") != std::string::npos);
  CHECK(Message(clash.status()).find(kCore) != std::string::npos);

  auto b = kubelet.Admit({"ml", "b", "main"}, kDev, 5);  // every other device
  REQUIRE(b.ok());
  const std::vector<std::string> b_dev = kubelet.Held(kDev);
  CHECK(b_dev.size() == 5);
  CHECK(std::find(b_dev.begin(), b_dev.end(), std::to_string(d)) == b_dev.end());
  // No device left without silicon held through neuroncore: admission fails, naming pod a.
  auto full = kubelet.Admit({"ml", "c", "main"}, kDev, 1);
  REQUIRE_FALSE(full.ok());
  CHECK(Message(full.status()).find("pod ml/a") != std::string::npos);
}

TEST_CASE("After a plugin restart holdings come from PodResources", "[integration][overlap]") {
  fakes::FakeKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  REQUIRE(kubelet.StartPodResources().ok());
  fakes::FakeClock clock;
  AllocatorOptions aopts;
  aopts.device_host_path = "/dev/null";
  const NodeSnapshot snap = SnapshotForShape(*topology::FindShape("trn1.2xlarge"));  // 1 x 2
  {
    Plugin first(kubelet, snap, clock, aopts);
    WaitReady(kubelet, 2, 1, 2);
    REQUIRE(kubelet.AllocateFor({"team", "holder", "main"}, kDev, {"0"}).ok());
  }
  Plugin second(kubelet, snap, clock, aopts);  // nothing in memory
  WaitReady(kubelet, 4, 1, 2);
  CHECK(second.ledger().recent_count() == 0);
  auto clash = kubelet.AllocateFor({"team", "late", "main"}, kCore, {"1"});
  REQUIRE_FALSE(clash.ok());
  CHECK(Message(clash.status()).find("pod team/holder") != std::string::npos);
  // The preferred allocation has no free silicon to offer: a short (empty) answer.
  v1beta1::PreferredAllocationRequest req;
  auto* c = req.add_container_requests();
  c->add_available_deviceids("0");
  c->add_available_deviceids("1");
  c->set_allocation_size(1);
  auto pref = kubelet.GetPreferredAllocation(kCore, req);
  REQUIRE(pref.ok());
  CHECK(pref->container_responses(0).deviceids_size() == 0);

  kubelet.RemovePod("team", "holder");
  CHECK(kubelet.AllocateFor({"team", "late", "main"}, kCore, {"1"}).ok());
  // ... and now the device is held through neuroncore.
  auto back = kubelet.AllocateFor({"team", "again", "main"}, kDev, {"0"});
  REQUIRE_FALSE(back.ok());
  CHECK(Message(back.status()).find("pod team/late") != std::string::npos);
}

TEST_CASE("Recent Allocates count until the kubelet lists them", "[integration][overlap]") {
  fakes::FakeKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  REQUIRE(kubelet.StartPodResources().ok());
  fakes::FakeClock clock;
  Plugin plugin(kubelet, SnapshotForShape(*topology::FindShape("inf2.xlarge")), clock);
  WaitReady(kubelet, 2, 1, 2);
  v1beta1::AllocateRequest dev;
  dev.add_container_requests()->add_devices_ids("0");
  // Raw Allocate: admitted, but not (yet) in PodResources.
  REQUIRE(kubelet.Allocate(kDev, dev).ok());
  REQUIRE(kubelet.Allocate(kDev, dev).ok());  // a retry of the same container
  CHECK(plugin.ledger().recent_count() == 1);
  v1beta1::AllocateRequest core;
  core.add_container_requests()->add_devices_ids("1");
  auto clash = kubelet.Allocate(kCore, core);
  REQUIRE_FALSE(clash.ok());
  CHECK(Message(clash.status()).find("not listed") != std::string::npos);
  // The pod never got admitted: after the window the silicon is free again.
  clock.Advance(absl::Minutes(1));
  CHECK(kubelet.Allocate(kCore, core).ok());
}

TEST_CASE("Host paths must be character devices on the host", "[integration][overlap]") {
  struct stat st {};
  REQUIRE(::lstat("/dev/null", &st) == 0);
  REQUIRE(S_ISCHR(st.st_mode));
  fakes::FakeKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  REQUIRE(kubelet.StartPodResources().ok());
  fakes::FakeClock clock;
  SECTION("emulated: /dev/null stands in for every /dev/neuronN") {
    AllocatorOptions aopts;
    aopts.device_host_path = "/dev/null";
    Plugin plugin(kubelet, SnapshotForShape(*topology::FindShape("trn1.32xlarge")), clock, aopts);
    WaitReady(kubelet, 2, 16, 32);
    auto r = kubelet.Admit({"ml", "a", "main"}, kDev, 4);
    REQUIRE(r.ok());
    const auto& cr = r->container_responses(0);
    REQUIRE(cr.devices_size() == 4);
    for (const auto& spec : cr.devices()) {
      CHECK(spec.host_path() == "/dev/null");
      CHECK(spec.container_path().rfind("/dev/neuron", 0) == 0);
    }
    CHECK(cr.envs().at("NEURON_RT_VISIBLE_CORES") == "0-7");
  }
  SECTION("a host path that does not exist fails like containerd") {
    AllocatorOptions aopts;
    aopts.device_host_path = "/tmp/emu/dev/neuron0";  // the bug seen on a real kubelet
    Plugin plugin(kubelet, SnapshotForShape(*topology::FindShape("inf2.xlarge")), clock, aopts);
    WaitReady(kubelet, 2, 1, 2);
    auto r = kubelet.Admit({"ml", "a", "main"}, kDev, 1);
    REQUIRE_FALSE(r.ok());
    CHECK(Message(r.status()) ==
          "CreateContainerError: lstat /tmp/emu/dev/neuron0: No such file or directory");
  }
}

}  // namespace
}  // namespace neuron::deviceplugin
