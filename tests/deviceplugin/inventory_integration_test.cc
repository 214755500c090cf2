// File: tests/deviceplugin/inventory_integration_test.cc
// The real inventory Watcher over an emulated sysfs tree (FakeClock + Poll()) feeding the
// plugin; the fake kubelet sees health changes through ListAndWatch.
#include <sys/stat.h>

#include <filesystem>
#include <thread>

#include "absl/synchronization/notification.h"
#include "catch2/catch.hpp"
#include "lib/deviceplugin/inventory_source.h"
#include "lib/deviceplugin/plugin_manager.h"
#include "lib/inventory/emulation.h"
#include "lib/sysfs/emulator.h"
#include "lib/sysfs/fs.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/kubelet/fake_kubelet.h"

namespace neuron::deviceplugin {
namespace {

constexpr absl::Duration kWait = absl::Seconds(10);

int Healthy(const v1beta1::ListAndWatchResponse& r) {
  int n = 0;
  for (const auto& d : r.devices()) n += d.health() == "Healthy";
  return n;
}

struct EmulatedNode {
  explicit EmulatedNode(const std::string& instance_type) {
    root = *inventory::PrepareEmulation(instance_type, "");
    fs = sysfs::MakeRootedFs(root);
    inventory::WatcherOptions o;
    o.healthy_after = absl::Seconds(30);
    o.scan.instance_type = instance_type;
    watcher = std::make_unique<inventory::Watcher>(*fs, clock, o);
    REQUIRE(watcher->Poll());
  }
  ~EmulatedNode() {
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  }
  std::string root;
  std::unique_ptr<sysfs::Fs> fs;
  fakes::FakeClock clock;
  std::unique_ptr<inventory::Watcher> watcher;
};

TEST_CASE("Snapshot from an emulated inventory matches the shape", "[integration]") {
  EmulatedNode node("trn2.3xlarge");
  NodeSnapshot snap = SnapshotFromInventory(node.watcher->Current());
  CHECK(snap.devices.size() == 1);
  CHECK(snap.cores_per_device() == 4);  // LNC=2 default
  for (const auto& d : snap.devices) CHECK(d.healthy);
}

TEST_CASE("Fault injection and recovery reach ListAndWatch", "[integration]") {
  EmulatedNode node("inf2.24xlarge");
  InventorySource source(*node.watcher);
  fakes::FakeKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  Allocator dev_alloc(ResourceKind::kDevice, {node.root, CoreNumbering::kContainer});
  Allocator core_alloc(ResourceKind::kCore, {node.root, CoreNumbering::kContainer});
  PluginServer dev(dev_alloc, source, nullptr, kubelet.dir() + "/aws-neuron.sock");
  PluginServer core(core_alloc, source, nullptr, kubelet.dir() + "/aws-neuroncore.sock");
  source.Subscribe([&] {
    dev.NotifyChanged();
    core.NotifyChanged();
  });
  ManagerOptions mo;
  mo.plugin_dir = kubelet.dir();
  PluginManager manager({&dev, &core}, mo);
  absl::Notification stop;
  // Catch2 v2 assertions are not thread-safe: the manager's status is checked after join().
  absl::Status run_status;
  std::thread t([&] { run_status = manager.Run(stop); });

  REQUIRE(kubelet.WaitForDevices(
      "aws.amazon.com/neuron", [](const auto& r) { return Healthy(r) == 6; }, kWait));
  // An uncorrectable ECC error on device 2.
  REQUIRE(sysfs::emulation::SetCounter(node.root, 2, "stats/hardware/mem_ecc_uncorrected", 1).ok());
  CHECK(node.watcher->Poll());
  REQUIRE(kubelet.WaitForDevices(
      "aws.amazon.com/neuron", [](const auto& r) { return Healthy(r) == 5; }, kWait));
  REQUIRE(kubelet.WaitForDevices(
      "aws.amazon.com/neuroncore", [](const auto& r) { return Healthy(r) == 10; }, kWait));
  CHECK(kubelet.LatestDevices("aws.amazon.com/neuron")->devices(2).health() == "Unhealthy");
  v1beta1::AllocateRequest bad;
  bad.add_container_requests()->add_devices_ids("2");
  CHECK(absl::IsInvalidArgument(kubelet.Allocate("aws.amazon.com/neuron", bad).status()));
  // Quiet for longer than healthy_after: healthy again.
  node.clock.Advance(absl::Seconds(31));
  CHECK(node.watcher->Poll());
  REQUIRE(kubelet.WaitForDevices(
      "aws.amazon.com/neuron", [](const auto& r) { return Healthy(r) == 6; }, kWait));
  // Emulated mode: host paths point into the emulated tree, where the node exists.
  auto alloc = kubelet.Allocate("aws.amazon.com/neuron", bad);
  REQUIRE(alloc.ok());
  const auto& spec = alloc->container_responses(0).devices(0);
  CHECK(spec.container_path() == "/dev/neuron2");
  CHECK(spec.host_path() == node.root + "/dev/neuron2");
  struct stat st {};
  CHECK(::stat(spec.host_path().c_str(), &st) == 0);
  // A device that vanishes is reported unhealthy, not dropped.
  REQUIRE(sysfs::emulation::RemoveDevice(node.root, 5).ok());
  CHECK(node.watcher->Poll());
  REQUIRE(kubelet.WaitForDevices(
      "aws.amazon.com/neuron",
      [](const auto& r) { return r.devices_size() == 6 && Healthy(r) == 5; }, kWait));
  stop.Notify();
  t.join();
  CHECK(run_status.ok());
  CHECK_FALSE(kubelet.StreamOpen("aws.amazon.com/neuron"));  // streams end on shutdown
}

}  // namespace
}  // namespace neuron::deviceplugin
