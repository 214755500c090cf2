// File: tests/deviceplugin/inventory_integration_test.cc
// The real inventory Watcher over an emulated sysfs tree (FakeClock + Poll()) feeding the
// plugin; the fake kubelet sees health changes through ListAndWatch.
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
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

constexpr absl::Duration kInventoryWait = absl::Seconds(10);

int HealthyCount(const v1beta1::ListAndWatchResponse& r) {
  int n = 0;
  for (const auto& d : r.devices()) n += d.health() == "Healthy";
  return n;
}

struct EmulatedNode {
  explicit EmulatedNode(const std::string& instance_type,
                        absl::Duration interval = absl::Seconds(5)) {
    root = *inventory::PrepareEmulation(instance_type, "");
    fs = sysfs::MakeRootedFs(root);
    inventory::WatcherOptions o;
    o.interval = interval;
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
  // As the binary in emulated mode: the host's /dev/null stands in for every /dev/neuronN.
  Allocator dev_alloc(assignment::ResourceKind::kDevice, {"/dev/null", CoreNumbering::kContainer});
  Allocator core_alloc(assignment::ResourceKind::kCore, {"/dev/null", CoreNumbering::kContainer});
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
  absl::Status run_status;  // asserted on this thread: Catch2 v2 is not thread-safe
  std::thread t([&] { run_status = manager.Run(stop); });

  REQUIRE(kubelet.WaitForDevices(
      "aws.amazon.com/neuron", [](const auto& r) { return HealthyCount(r) == 6; }, kInventoryWait));
  // An uncorrectable ECC error on device 2.
  REQUIRE(sysfs::emulation::SetCounter(node.root, 2, "stats/hardware/mem_ecc_uncorrected", 1).ok());
  CHECK(node.watcher->Poll());
  REQUIRE(kubelet.WaitForDevices(
      "aws.amazon.com/neuron", [](const auto& r) { return HealthyCount(r) == 5; }, kInventoryWait));
  REQUIRE(kubelet.WaitForDevices(
      "aws.amazon.com/neuroncore", [](const auto& r) { return HealthyCount(r) == 10; },
      kInventoryWait));
  CHECK(kubelet.LatestDevices("aws.amazon.com/neuron")->devices(2).health() == "Unhealthy");
  v1beta1::AllocateRequest bad;
  bad.add_container_requests()->add_devices_ids("2");
  CHECK(absl::IsInvalidArgument(kubelet.Allocate("aws.amazon.com/neuron", bad).status()));
  // Quiet for longer than healthy_after: healthy again.
  node.clock.Advance(absl::Seconds(31));
  CHECK(node.watcher->Poll());
  REQUIRE(kubelet.WaitForDevices(
      "aws.amazon.com/neuron", [](const auto& r) { return HealthyCount(r) == 6; }, kInventoryWait));
  // Emulated mode: the host path exists on the host and is a character device.
  auto alloc = kubelet.Allocate("aws.amazon.com/neuron", bad);
  REQUIRE(alloc.ok());
  const auto& spec = alloc->container_responses(0).devices(0);
  CHECK(spec.container_path() == "/dev/neuron2");
  CHECK(spec.host_path() == "/dev/null");
  struct stat st {};
  CHECK(::lstat(spec.host_path().c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  // A device that vanishes is reported unhealthy, not dropped.
  REQUIRE(sysfs::emulation::RemoveDevice(node.root, 5).ok());
  CHECK(node.watcher->Poll());
  REQUIRE(kubelet.WaitForDevices(
      "aws.amazon.com/neuron",
      [](const auto& r) { return r.devices_size() == 6 && HealthyCount(r) == 5; }, kInventoryWait));
  stop.Notify();
  t.join();
  CHECK(run_status.ok());
  // Streams end on shutdown; the kubelet's reader sees the end a moment later (seen racing once).
  const absl::Time deadline = absl::Now() + kInventoryWait;
  while (kubelet.StreamOpen("aws.amazon.com/neuron") && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  CHECK_FALSE(kubelet.StreamOpen("aws.amazon.com/neuron"));
}

TEST_CASE("Faults reach ListAndWatch through the health fast path", "[integration]") {
  // The full rescan is an hour away on the fake clock; health ticks are 100 ms of it.
  EmulatedNode node("inf2.24xlarge", absl::Hours(1));
  InventorySource source(*node.watcher);
  fakes::FakeKubelet kubelet;
  REQUIRE(kubelet.Start().ok());
  Allocator dev_alloc(assignment::ResourceKind::kDevice, {node.root, CoreNumbering::kContainer});
  PluginServer dev(dev_alloc, source, nullptr, kubelet.dir() + "/aws-neuron.sock");
  source.Subscribe([&] { dev.NotifyChanged(); });
  ManagerOptions mo;
  mo.plugin_dir = kubelet.dir();
  PluginManager manager({&dev}, mo);
  absl::Notification stop;
  absl::Status manager_status;
  std::thread t([&] { manager_status = manager.Run(stop); });
  std::atomic<bool> watch_done{false};
  std::thread watch([&] {
    node.watcher->Run(stop);
    watch_done = true;
  });

  const std::string kRes = "aws.amazon.com/neuron";
  // Moves the fake clock one health tick at a time (never near the rescan) until the kubelet's
  // latest list has `healthy` Healthy devices.
  auto ticks_until = [&](int healthy) {
    for (int i = 0; i < 200; ++i) {
      node.clock.Advance(absl::Milliseconds(100));
      if (kubelet.WaitForDevices(
              kRes, [&](const auto& r) { return HealthyCount(r) == healthy; },
              absl::Milliseconds(50))) {
        return true;
      }
    }
    return false;
  };
  REQUIRE(kubelet.WaitForDevices(
      kRes, [](const auto& r) { return HealthyCount(r) == 6; }, kInventoryWait));
  REQUIRE(
      sysfs::emulation::SetCounter(node.root, 1, "stats/hardware/sram_ecc_uncorrected", 4).ok());
  CHECK(ticks_until(5));
  CHECK(kubelet.LatestDevices(kRes)->devices(1).health() == "Unhealthy");
  REQUIRE(sysfs::emulation::RemoveDevice(node.root, 3).ok());
  CHECK(ticks_until(4));
  REQUIRE(sysfs::emulation::UnbindDriver(node.root, 4).ok());
  CHECK(ticks_until(3));
  CHECK(kubelet.LatestDevices(kRes)->devices_size() == 6);

  stop.Notify();
  while (!watch_done) {  // Run's two threads may each be about to sleep on the fake clock
    node.clock.Advance(absl::Hours(1));
    absl::SleepFor(absl::Milliseconds(1));
  }
  watch.join();
  t.join();
  CHECK(manager_status.ok());
}

}  // namespace
}  // namespace neuron::deviceplugin
