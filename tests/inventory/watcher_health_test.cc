// File: tests/inventory/watcher_health_test.cc
// The watcher's fast health path (PollHealth / Run's health ticks) over an emulated tree, with
// the full rescan made irrelevant (interval 1 h, never called between fault and check): faults
// must arrive through the probe of class dir, driver link and uncorrectable counters.
#include <atomic>
#include <filesystem>
#include <thread>

#include "catch2/catch.hpp"
#include "lib/inventory/watcher.h"
#include "lib/sysfs/emulator.h"
#include "tests/fakes/fake_clock.h"
#include "tests/sysfs/temp_dir.h"

namespace neuron::inventory {
namespace {

using sysfs::testing::TempDir;
namespace em = sysfs::emulation;

sysfs::EmulationSpec HealthSpec() {
  sysfs::EmulationSpec s;
  s.instance_type = "inf2.24xlarge";
  s.pci_device_id = 0x7264;
  s.devices = 3;
  s.cores_per_device = 2;
  s.links = {{1}, {0, 2}, {1}};
  s.numa_nodes = 1;
  return s;
}

struct HealthFixture {
  TempDir dir;
  std::unique_ptr<sysfs::Fs> fs;
  fakes::FakeClock clock;
  std::unique_ptr<Watcher> watcher;
  std::atomic<int> notifications{0};

  HealthFixture() {
    REQUIRE(sysfs::WriteEmulatedTree(dir.path(), HealthSpec()).ok());
    fs = sysfs::MakeRootedFs(dir.path());
    WatcherOptions opts;
    opts.interval = absl::Hours(1);
    opts.health_interval = absl::Milliseconds(100);
    opts.healthy_after = absl::Seconds(30);
    watcher = std::make_unique<Watcher>(*fs, clock, opts);
    watcher->Subscribe([this](const Inventory&) { ++notifications; });
  }
  Device Dev(int i) const {
    for (const Device& d : watcher->Current().devices) {
      if (d.index == i) return d;
    }
    FAIL("no device " << i);
    return {};
  }
  std::string DriverLink(int i) const {
    return dir.path() + "/sys/bus/pci/devices/" + sysfs::EmulatedPciAddress(i) + "/driver";
  }
};

TEST_CASE("fast path: nothing changed, nothing reported", "[inventory][watcher][health]") {
  HealthFixture f;
  CHECK_FALSE(f.watcher->PollHealth());  // before the first Poll there is nothing to watch
  REQUIRE(f.watcher->Poll());
  CHECK_FALSE(f.watcher->PollHealth());
  CHECK_FALSE(f.watcher->PollHealth());
  CHECK(f.notifications == 1);
}

TEST_CASE("fast path: an ECC rise, then the quiet period", "[inventory][watcher][health]") {
  HealthFixture f;
  REQUIRE(f.watcher->Poll());
  REQUIRE(em::SetCounter(f.dir.path(), 1, "stats/hardware/mem_ecc_uncorrected", 3).ok());
  // Not a health input: only a full rescan would pick it up.
  REQUIRE(em::SetCounter(f.dir.path(), 1, "stats/hardware/mem_ecc_repairable_uncorrected", 7).ok());
  CHECK(f.watcher->PollHealth());
  CHECK(f.notifications == 2);
  const Device d = f.Dev(1);
  CHECK_FALSE(d.healthy);
  CHECK(d.unhealthy_reason == "uncorrectable ECC error");
  CHECK(d.hardware.at("mem_ecc_uncorrected") == 3);             // the probe's reading
  CHECK(d.hardware.at("mem_ecc_repairable_uncorrected") == 0);  // proves no rescan ran
  CHECK(f.Dev(0).healthy);

  // A rise on an unhealthy device updates the value without a health notification.
  REQUIRE(em::SetCounter(f.dir.path(), 1, "stats/hardware/sram_ecc_uncorrected", 1).ok());
  CHECK(f.watcher->PollHealth());
  CHECK(f.notifications == 2);
  CHECK(f.Dev(1).hardware.at("sram_ecc_uncorrected") == 1);
  f.clock.Advance(absl::Seconds(29));
  CHECK_FALSE(f.watcher->PollHealth());
  CHECK_FALSE(f.Dev(1).healthy);
  f.clock.Advance(absl::Seconds(1));
  CHECK(f.watcher->PollHealth());  // healthy again on the fast pace, no rescan needed
  CHECK(f.Dev(1).healthy);
  CHECK(f.notifications == 3);
  // The full rescan agrees (no flapping between the two paces).
  CHECK_FALSE(f.watcher->Poll());
  CHECK(f.Dev(1).healthy);
}

TEST_CASE("fast path: a removed device dir, then its return", "[inventory][watcher][health]") {
  HealthFixture f;
  REQUIRE(f.watcher->Poll());
  REQUIRE(em::RemoveDevice(f.dir.path(), 2).ok());
  CHECK(f.watcher->PollHealth());
  CHECK(f.notifications == 2);
  const Device gone = f.Dev(2);
  CHECK_FALSE(gone.present);
  CHECK_FALSE(gone.healthy);
  CHECK(gone.unhealthy_reason == "vanished");
  CHECK(gone.driver.empty());
  CHECK(f.watcher->Current().total_cores == 4);
  CHECK_FALSE(f.watcher->PollHealth());
  CHECK_FALSE(f.watcher->Poll());  // the rescan agrees

  REQUIRE(em::RestoreDevice(f.dir.path(), HealthSpec(), 2).ok());
  CHECK(f.watcher->PollHealth());  // back: rescanned, still in its quiet period
  CHECK(f.Dev(2).present);
  CHECK_FALSE(f.Dev(2).healthy);
  CHECK(f.watcher->Current().total_cores == 6);
  f.clock.Advance(absl::Seconds(30));
  CHECK(f.watcher->PollHealth());
  CHECK(f.Dev(2).healthy);
}

TEST_CASE("fast path: a removed driver link", "[inventory][watcher][health]") {
  HealthFixture f;
  REQUIRE(f.watcher->Poll());
  const std::string link = f.DriverLink(0);
  const std::filesystem::path target = std::filesystem::read_symlink(link);
  REQUIRE(std::filesystem::remove(link));  // the class dir stays
  CHECK(f.watcher->PollHealth());
  CHECK(f.Dev(0).present);
  CHECK_FALSE(f.Dev(0).healthy);
  CHECK(f.Dev(0).unhealthy_reason == "driver unbound");
  CHECK(f.Dev(0).driver.empty());
  CHECK_FALSE(f.watcher->Poll());  // the rescan reads the same link: still unbound
  CHECK_FALSE(f.Dev(0).healthy);

  std::filesystem::create_symlink(target, link);
  f.clock.Advance(absl::Seconds(30));
  CHECK(f.watcher->PollHealth());
  CHECK(f.Dev(0).healthy);
  CHECK(f.Dev(0).driver == "neuron-driver");
}

TEST_CASE("fast path: an unbind (class dir and driver link gone)", "[inventory][watcher][health]") {
  HealthFixture f;
  REQUIRE(f.watcher->Poll());
  REQUIRE(em::UnbindDriver(f.dir.path(), 1).ok());
  CHECK(f.watcher->PollHealth());
  CHECK_FALSE(f.Dev(1).present);
  CHECK(f.Dev(1).unhealthy_reason == "driver unbound");
  // The PCI function then goes too (hot-unplug in two steps).
  REQUIRE(em::RemoveDevice(f.dir.path(), 1).ok());
  CHECK(f.watcher->PollHealth());
  CHECK(f.Dev(1).unhealthy_reason == "vanished");
}

TEST_CASE("Run checks health every health_interval", "[inventory][watcher][health]") {
  HealthFixture f;
  absl::Notification stop;
  std::atomic<bool> done{false};
  std::thread t([&] {
    f.watcher->Run(stop);
    done = true;
  });
  auto wait_for = [](const std::function<bool()>& cond) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (!cond() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
    return cond();
  };
  REQUIRE(wait_for([&] { return f.clock.sleepers() == 2; }));  // rescan and health threads
  CHECK(f.notifications == 1);
  REQUIRE(em::SetCounter(f.dir.path(), 0, "stats/hardware/sram_ecc_uncorrected", 2).ok());
  f.clock.Advance(absl::Milliseconds(100));  // one health tick; the rescan is an hour away
  CHECK(wait_for([&] { return f.notifications == 2; }));
  stop.Notify();
  while (!done) {  // either thread may be about to sleep again: advance until both left
    f.clock.Advance(absl::Hours(1));
    absl::SleepFor(absl::Milliseconds(1));
  }
  t.join();
  CHECK_FALSE(f.watcher->Current().devices[0].healthy);
}

}  // namespace
}  // namespace neuron::inventory
