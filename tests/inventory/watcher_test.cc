#include "lib/inventory/watcher.h"

#include <atomic>
#include <thread>

#include "catch2/catch.hpp"
#include "lib/sysfs/emulator.h"
#include "tests/fakes/fake_clock.h"
#include "tests/sysfs/temp_dir.h"

namespace neuron::inventory {
namespace {

using sysfs::testing::TempDir;
namespace em = sysfs::emulation;

sysfs::EmulationSpec Spec() {
  sysfs::EmulationSpec s;
  s.instance_type = "inf2.24xlarge";
  s.pci_device_id = 0x7264;
  s.devices = 3;
  s.cores_per_device = 2;
  s.links = {{1}, {0, 2}, {1}};
  s.numa_nodes = 1;
  return s;
}

struct Fixture {
  TempDir dir;
  std::unique_ptr<sysfs::Fs> fs;
  fakes::FakeClock clock;
  std::unique_ptr<Watcher> watcher;
  int notifications = 0;

  Fixture() {
    REQUIRE(sysfs::WriteEmulatedTree(dir.path(), Spec()).ok());
    fs = sysfs::MakeRootedFs(dir.path());
    WatcherOptions opts;
    opts.interval = absl::Seconds(5);
    opts.healthy_after = absl::Seconds(30);
    watcher = std::make_unique<Watcher>(*fs, clock, opts);
    watcher->Subscribe([this](const Inventory&) { ++notifications; });
  }
  const Device& Dev(int i) const {
    static Inventory inv;
    inv = watcher->Current();
    for (const Device& d : inv.devices) {
      if (d.index == i) return d;
    }
    FAIL("no device " << i);
    return inv.devices.front();
  }
};

TEST_CASE("first poll reports everything healthy", "[inventory][watcher]") {
  Fixture f;
  CHECK(f.watcher->Poll());
  CHECK(f.notifications == 1);
  const Inventory inv = f.watcher->Current();
  REQUIRE(inv.devices.size() == 3);
  for (const Device& d : inv.devices) {
    CHECK(d.healthy);
    CHECK(d.unhealthy_reason.empty());
  }
  CHECK_FALSE(f.watcher->Poll());  // nothing changed
  CHECK(f.notifications == 1);
}

TEST_CASE("ECC rise -> unhealthy -> quiet period -> healthy", "[inventory][watcher]") {
  Fixture f;
  REQUIRE(f.watcher->Poll());
  // A device with errors from before we started is not penalised: counters are cumulative.
  REQUIRE(em::SetCounter(f.dir.path(), 1, "stats/hardware/mem_ecc_uncorrected", 3).ok());
  CHECK(f.watcher->Poll());
  CHECK_FALSE(f.Dev(1).healthy);
  CHECK(f.Dev(1).unhealthy_reason == "uncorrectable ECC error");
  CHECK(f.Dev(0).healthy);
  CHECK(f.notifications == 2);

  f.clock.Advance(absl::Seconds(29));
  CHECK_FALSE(f.watcher->Poll());
  CHECK_FALSE(f.Dev(1).healthy);
  // Another rise restarts the quiet period.
  REQUIRE(em::SetCounter(f.dir.path(), 1, "stats/hardware/sram_ecc_uncorrected", 1).ok());
  CHECK_FALSE(f.watcher->Poll());  // still unhealthy: no change to report
  f.clock.Advance(absl::Seconds(29));
  CHECK_FALSE(f.watcher->Poll());
  CHECK_FALSE(f.Dev(1).healthy);
  f.clock.Advance(absl::Seconds(1));
  CHECK(f.watcher->Poll());
  CHECK(f.Dev(1).healthy);
  CHECK(f.Dev(1).unhealthy_reason.empty());
  CHECK(f.notifications == 3);
  // A cleared counter (written to 0) is a new baseline, not a rise.
  REQUIRE(em::SetCounter(f.dir.path(), 1, "stats/hardware/mem_ecc_uncorrected", 0).ok());
  CHECK_FALSE(f.watcher->Poll());
  CHECK(f.Dev(1).healthy);
  // Repairable errors do not make a device unhealthy.
  REQUIRE(em::SetCounter(f.dir.path(), 2, "stats/hardware/mem_ecc_repairable_uncorrected", 5).ok());
  CHECK_FALSE(f.watcher->Poll());
  CHECK(f.Dev(2).healthy);
}

TEST_CASE("a vanished device is reported unhealthy until it returns and stays",
          "[inventory][watcher]") {
  Fixture f;
  REQUIRE(f.watcher->Poll());
  REQUIRE(em::RemoveDevice(f.dir.path(), 2).ok());
  CHECK(f.watcher->Poll());
  const Device gone = f.Dev(2);
  CHECK_FALSE(gone.present);
  CHECK_FALSE(gone.healthy);
  CHECK(gone.unhealthy_reason == "vanished");
  CHECK(gone.pci_address == sysfs::EmulatedPciAddress(2));
  CHECK(f.watcher->Current().total_cores == 4);
  CHECK(f.watcher->Current().devices.size() == 3);

  REQUIRE(em::RestoreDevice(f.dir.path(), Spec(), 2).ok());
  CHECK(f.watcher->Poll());  // present again (still unhealthy: quiet period)
  CHECK(f.Dev(2).present);
  CHECK_FALSE(f.Dev(2).healthy);
  f.clock.Advance(absl::Seconds(30));
  CHECK(f.watcher->Poll());
  CHECK(f.Dev(2).healthy);
}

TEST_CASE("driver unbind is reported as such", "[inventory][watcher]") {
  Fixture f;
  REQUIRE(f.watcher->Poll());
  REQUIRE(em::UnbindDriver(f.dir.path(), 0).ok());
  CHECK(f.watcher->Poll());
  CHECK_FALSE(f.Dev(0).healthy);
  CHECK_FALSE(f.Dev(0).present);
  CHECK(f.Dev(0).unhealthy_reason == "driver unbound");
  CHECK(f.Dev(1).healthy);
  CHECK(f.Dev(1).pci_address == sysfs::EmulatedPciAddress(1));  // mapping survives the gap
}

TEST_CASE("an unbind followed by the PCI function going is 'vanished' on the next poll",
          "[inventory][watcher]") {
  // Hot-unplug removes the class device and the PCI function in two steps; a poll that falls
  // between them must not leave the device stuck as "driver unbound".
  Fixture f;
  REQUIRE(f.watcher->Poll());
  REQUIRE(em::UnbindDriver(f.dir.path(), 2).ok());
  f.watcher->Poll();
  CHECK(f.Dev(2).unhealthy_reason == "driver unbound");
  REQUIRE(em::RemoveDevice(f.dir.path(), 2).ok());
  CHECK(f.watcher->Poll());
  CHECK(f.Dev(2).unhealthy_reason == "vanished");
}

TEST_CASE("garbled files count in read_errors without health changes", "[inventory][watcher]") {
  Fixture f;
  REQUIRE(f.watcher->Poll());
  REQUIRE(em::WriteAttribute(f.dir.path(), 0, "stats/hardware/mem_ecc_uncorrected", "x\n").ok());
  CHECK_FALSE(f.watcher->Poll());
  CHECK(f.watcher->Current().read_errors == 1);
  CHECK(f.Dev(0).healthy);
}

TEST_CASE("Run polls every interval on the injected clock", "[inventory][watcher]") {
  Fixture f;
  std::atomic<int> polls{0};
  f.watcher->Subscribe([&polls](const Inventory&) { ++polls; });
  absl::Notification stop;
  std::atomic<bool> done{false};
  std::thread t([&] {
    f.watcher->Run(stop);
    done = true;
  });
  // First poll happens immediately; then the runner sleeps on the fake clock.
  auto wait_sleeping = [&] {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    // Two sleepers: the rescan loop and the health thread.
    while (f.clock.sleepers() < 2 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
    return f.clock.sleepers() == 2;
  };
  REQUIRE(wait_sleeping());
  CHECK(polls == 1);
  REQUIRE(em::RemoveDevice(f.dir.path(), 1).ok());
  f.clock.Advance(absl::Seconds(5));
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (polls < 2 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
  CHECK(polls == 2);
  stop.Notify();
  // Run's two threads (rescan, health) may each be about to sleep: advance until both left.
  while (!done) {
    f.clock.Advance(absl::Seconds(5));
    absl::SleepFor(absl::Milliseconds(1));
  }
  t.join();
  CHECK_FALSE(f.watcher->Current().devices[1].present);
}

}  // namespace
}  // namespace neuron::inventory
