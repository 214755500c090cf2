// File: tests/inventory/watcher_driver_status_test.cc
// The driver's own health status (stats/hardware/health_status, drivers 2.28+) as health
// inputs: hw_error_event on the fast path; unhealthy_components, the health-status ECC counts
// and the heartbeat on the full rescan. Emulated tree (driver 2.30.2's, scrambled in one case:
// the nodes are found by name), fake clock.
#include <atomic>

#include "catch2/catch.hpp"
#include "lib/inventory/watcher.h"
#include "lib/sysfs/emulator.h"
#include "tests/fakes/fake_clock.h"
#include "tests/sysfs/temp_dir.h"

namespace neuron::inventory {
namespace {

namespace em = sysfs::emulation;
constexpr char kStatus[] = "stats/hardware/health_status/";

struct DriverStatusFixture {
  sysfs::testing::TempDir dir;
  std::unique_ptr<sysfs::Fs> fs;
  fakes::FakeClock clock;
  std::unique_ptr<Watcher> watcher;

  explicit DriverStatusFixture(uint64_t scramble_seed = 0) {
    sysfs::EmulationSpec s;
    s.instance_type = "trn1.2xlarge";
    s.pci_device_id = 0x7164;
    s.devices = 2;
    s.cores_per_device = 2;
    s.links = {{1}, {0}};
    s.scramble_seed = scramble_seed;
    REQUIRE(sysfs::WriteEmulatedTree(dir.path(), s).ok());
    fs = sysfs::MakeRootedFs(dir.path());
    WatcherOptions opts;
    opts.interval = absl::Seconds(5);
    opts.health_interval = absl::Milliseconds(50);
    opts.healthy_after = absl::Seconds(10);
    opts.heartbeat_timeout = absl::Seconds(60);
    watcher = std::make_unique<Watcher>(*fs, clock, opts);
  }
  Device Dev(int i) const {
    for (const Device& d : watcher->Current().devices) {
      if (d.index == i) return d;
    }
    FAIL("no device " << i);
    return {};
  }
  void Write(int device, const std::string& leaf, const std::string& contents) {
    REQUIRE(em::WriteAttribute(dir.path(), device, kStatus + leaf, contents).ok());
  }
};

TEST_CASE("a rising hw_error_event takes the device out on the fast path",
          "[inventory][watcher][health]") {
  for (uint64_t seed : {uint64_t{0}, uint64_t{3}}) {
    CAPTURE(seed);
    DriverStatusFixture f(seed);
    REQUIRE(f.watcher->Poll());
    CHECK(f.Dev(1).health_status.at("hw_error_event") == 0);
    f.Write(1, "hw_error_event", "2\n");
    CHECK(f.watcher->PollHealth());
    CHECK_FALSE(f.Dev(1).healthy);
    CHECK(f.Dev(1).unhealthy_reason == "hardware error event");
    CHECK(f.Dev(1).health_status.at("hw_error_event") == 2);
    CHECK(f.Dev(0).healthy);
    f.clock.Advance(absl::Seconds(11));
    CHECK(f.watcher->PollHealth());
    CHECK(f.Dev(1).healthy);
  }
}

TEST_CASE("unhealthy_components keeps the device out for as long as it lists something",
          "[inventory][watcher][health]") {
  DriverStatusFixture f;
  REQUIRE(f.watcher->Poll());
  f.Write(0, "unhealthy_components", "hbm2\nsram\n");
  CHECK(f.watcher->Poll());
  CHECK_FALSE(f.Dev(0).healthy);
  CHECK(f.Dev(0).unhealthy_reason == "driver reports unhealthy components: hbm2, sram");
  CHECK(f.Dev(0).unhealthy_components == "hbm2, sram");
  // The fast path, long after the quiet period, does not clear a standing report.
  f.clock.Advance(absl::Minutes(5));
  f.watcher->PollHealth();
  CHECK_FALSE(f.Dev(0).healthy);
  // Cleared by the driver: healthy after the quiet period.
  f.Write(0, "unhealthy_components", "\n");
  f.watcher->Poll();
  CHECK_FALSE(f.Dev(0).healthy);
  f.clock.Advance(absl::Seconds(11));
  f.watcher->PollHealth();
  CHECK(f.Dev(0).healthy);
  // A garbled node is a read error, never a reason.
  f.Write(0, "unhealthy_components", std::string("x\x01y"));
  const uint64_t errors = f.watcher->Current().read_errors;
  f.watcher->Poll();
  CHECK(f.Dev(0).healthy);
  CHECK(f.watcher->Current().read_errors == errors + 1);
}

TEST_CASE("a rising health-status ECC count is an uncorrectable ECC error",
          "[inventory][watcher][health]") {
  DriverStatusFixture f;
  REQUIRE(f.watcher->Poll());
  f.Write(1, "hbm_ecc_err_count", "1\n");
  CHECK(f.watcher->Poll());
  CHECK_FALSE(f.Dev(1).healthy);
  CHECK(f.Dev(1).unhealthy_reason ==
        "uncorrectable ECC error (driver health status hbm_ecc_err_count)");
  f.clock.Advance(absl::Seconds(11));
  f.watcher->Poll();
  CHECK(f.Dev(1).healthy);  // the count stays at 1: no new rise
}

TEST_CASE("a heartbeat that stops after moving is unhealthy; one never seen moving is not",
          "[inventory][watcher][health]") {
  DriverStatusFixture f;
  REQUIRE(f.watcher->Poll());
  // Device 0's heartbeat never moves (the emulated default): never judged.
  // Device 1's moves twice, then stops.
  for (int beat = 2; beat <= 3; ++beat) {
    f.clock.Advance(absl::Seconds(5));
    f.Write(1, "healthcheck_heartbeat", std::to_string(beat) + "\n");
    f.watcher->Poll();
  }
  CHECK(f.Dev(1).healthy);
  f.clock.Advance(absl::Seconds(59));
  f.watcher->Poll();
  CHECK(f.Dev(1).healthy);
  f.clock.Advance(absl::Seconds(2));
  CHECK(f.watcher->Poll());
  CHECK_FALSE(f.Dev(1).healthy);
  CHECK(f.Dev(1).unhealthy_reason.rfind("driver health heartbeat stopped", 0) == 0);
  CHECK(f.Dev(0).healthy);
  // Beating again: healthy after the quiet period.
  f.Write(1, "healthcheck_heartbeat", "4\n");
  f.watcher->Poll();
  f.clock.Advance(absl::Seconds(11));
  f.watcher->PollHealth();
  CHECK(f.Dev(1).healthy);
}

}  // namespace
}  // namespace neuron::inventory
