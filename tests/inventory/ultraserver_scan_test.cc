// File: tests/inventory/ultraserver_scan_test.cc
// The UltraServer identity in the inventory: an emulated trn2u node (--emulate-ultraserver)
// reads back as its identity; the driver's "busy" keeps the previous scan's identity; garbage
// counts a read error and leaves none; "\n" (no longer an UltraServer node) clears it; the
// watcher tells subscribers when it changes; the flag is refused on other shapes.
#include <filesystem>
#include <fstream>
#include <string>

#include "catch2/catch.hpp"
#include "lib/inventory/emulation.h"
#include "lib/inventory/host.h"
#include "lib/inventory/inventory.h"
#include "lib/inventory/watcher.h"
#include "lib/ultraserver/labels.h"
#include "tests/fakes/fake_clock.h"
#include "tests/sysfs/temp_dir.h"

namespace neuron::inventory {
namespace {

using sysfs::testing::TempDir;

// Overwrites one class attribute of the emulated tree under `root`.
void WriteClassFile(const std::string& root, const std::string& name, const std::string& body) {
  std::ofstream(std::filesystem::path(root) / ultraserver::kClassDir / name) << body;
}

ultraserver::EmulatedNode Node(const std::string& spec) {
  auto n = ultraserver::ParseEmulatedNode(spec);
  REQUIRE(n.ok());
  return *n;
}

TEST_CASE("an emulated UltraServer node reads back as its identity", "[inventory][ultraserver]") {
  TempDir dir;
  REQUIRE(PrepareEmulation(kUltraServerShape, dir.path(), 0, 0, Node("us-a:3")).ok());
  auto fs = sysfs::MakeRootedFs(dir.path());
  auto inv = ReadInventory(*fs);
  REQUIRE(inv.ok());
  REQUIRE(inv->ultraserver.has_value());
  const ultraserver::Identity& id = *inv->ultraserver;
  CHECK(id.modes == std::vector<int>{1, 2, 4});
  CHECK(id.node_id_4 == 3);
  CHECK(id.node_id_2 == 1);  // nodes 2 and 3 are a pair
  CHECK(id.server_id_4.size() == 16);
  CHECK(inv->read_errors == 0);

  // Node 2 of the same UltraServer: same server ids, another node id.
  TempDir other;
  REQUIRE(PrepareEmulation(kUltraServerShape, other.path(), 0, 0, Node("us-a:2")).ok());
  auto fs2 = sysfs::MakeRootedFs(other.path());
  auto inv2 = ReadInventory(*fs2);
  REQUIRE(inv2.ok());
  REQUIRE(inv2->ultraserver.has_value());
  CHECK(inv2->ultraserver->server_id_4 == id.server_id_4);
  CHECK(inv2->ultraserver->server_id_2 == id.server_id_2);
  CHECK(inv2->ultraserver->node_id_4 == 2);
  CHECK(inv2->ultraserver->node_id_2 == 0);
}

TEST_CASE("emulated nodes outside an UltraServer have no identity", "[inventory][ultraserver]") {
  for (const char* shape : {"trn2u.48xlarge", "trn1.32xlarge", "trn2.48xlarge"}) {
    TempDir dir;
    REQUIRE(PrepareEmulation(shape, dir.path()).ok());
    auto fs = sysfs::MakeRootedFs(dir.path());
    auto inv = ReadInventory(*fs);
    REQUIRE(inv.ok());
    INFO(shape);
    CHECK_FALSE(inv->ultraserver.has_value());
    CHECK(inv->read_errors == 0);
  }
}

TEST_CASE("busy keeps the last identity, garbage leaves none and counts, \\n clears",
          "[inventory][ultraserver]") {
  TempDir dir;
  REQUIRE(PrepareEmulation(kUltraServerShape, dir.path(), 0, 0, Node("us-b:1")).ok());
  auto fs = sysfs::MakeRootedFs(dir.path());
  Scanner scanner(*fs);
  auto first = scanner.Scan();
  REQUIRE(first.ok());
  REQUIRE(first->ultraserver.has_value());
  const ultraserver::Identity known = *first->ultraserver;
  const uint64_t errors = first->read_errors;

  WriteClassFile(dir.path(), "node_id_4", "busy\n");  // the driver's election runs
  auto busy = scanner.Scan();
  REQUIRE(busy.ok());
  REQUIRE(busy->ultraserver.has_value());
  CHECK(*busy->ultraserver == known);
  CHECK(busy->read_errors == errors);  // busy is not an error

  WriteClassFile(dir.path(), "node_id_4", "1\n");
  WriteClassFile(dir.path(), "ultraserver_mode", "1,2,9\n");  // garbage: no guess
  auto garbage = scanner.Scan();
  REQUIRE(garbage.ok());
  CHECK_FALSE(garbage->ultraserver.has_value());
  CHECK(garbage->read_errors == errors + 1);

  WriteClassFile(dir.path(), "ultraserver_mode", "busy\n");  // busy after garbage: still none
  auto busy_after = scanner.Scan();
  REQUIRE(busy_after.ok());
  CHECK_FALSE(busy_after->ultraserver.has_value());

  WriteClassFile(dir.path(), "ultraserver_mode", "1,2,4\n");
  auto back = scanner.Scan();
  REQUIRE(back.ok());
  REQUIRE(back->ultraserver.has_value());
  CHECK(*back->ultraserver == known);

  WriteClassFile(dir.path(), "ultraserver_mode", "\n");  // no longer an UltraServer node
  auto gone = scanner.Scan();
  REQUIRE(gone.ok());
  CHECK_FALSE(gone->ultraserver.has_value());
  CHECK(gone->read_errors == errors + 1);
}

TEST_CASE("the watcher tells subscribers when the identity changes, not when busy",
          "[inventory][ultraserver]") {
  TempDir dir;
  REQUIRE(PrepareEmulation(kUltraServerShape, dir.path(), 0, 0, Node("us-c:0")).ok());
  auto fs = sysfs::MakeRootedFs(dir.path());
  fakes::FakeClock clock;
  WatcherOptions opts;
  opts.health_interval = absl::ZeroDuration();
  Watcher watcher(*fs, clock, opts);
  int notified = 0;
  std::optional<ultraserver::Identity> seen;
  watcher.Subscribe([&](const Inventory& inv) {
    ++notified;
    seen = inv.ultraserver;
  });
  CHECK(watcher.Poll());
  CHECK(notified == 1);
  REQUIRE(seen.has_value());
  CHECK(seen->node_id_4 == 0);

  WriteClassFile(dir.path(), "ultraserver_mode", "busy\n");
  CHECK_FALSE(watcher.Poll());
  CHECK(notified == 1);
  CHECK(watcher.Current().ultraserver.has_value());

  WriteClassFile(dir.path(), "ultraserver_mode", "\n");
  CHECK(watcher.Poll());
  CHECK(notified == 2);
  CHECK_FALSE(seen.has_value());
}

TEST_CASE("--emulate-ultraserver only with --emulate=trn2u.48xlarge", "[inventory][ultraserver]") {
  auto none = ParseEmulateUltraServerFlag("trn1.32xlarge", "");
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());

  auto ok = ParseEmulateUltraServerFlag("trn2u.48xlarge", "us-a:2:1,4");
  REQUIRE(ok.ok());
  REQUIRE(ok->has_value());
  CHECK((*ok)->node == 2);
  CHECK((*ok)->modes == std::vector<int>{1, 4});

  auto wrong_shape = ParseEmulateUltraServerFlag("trn2.48xlarge", "us-a:2");
  CHECK(absl::IsInvalidArgument(wrong_shape.status()));
  CHECK_THAT(std::string(wrong_shape.status().message()),
             Catch::Contains("--emulate=trn2u.48xlarge") && Catch::Contains("trn2.48xlarge"));
  auto no_emulate = ParseEmulateUltraServerFlag("", "us-a:2");
  CHECK(absl::IsInvalidArgument(no_emulate.status()));
  CHECK(absl::IsInvalidArgument(ParseEmulateUltraServerFlag("trn2u.48xlarge", "us-a:4").status()));

  const topology::Shape* trn1 = topology::FindShape("trn1.32xlarge");
  REQUIRE(trn1 != nullptr);
  CHECK(absl::IsInvalidArgument(BuildEmulationSpec(*trn1, 0, 0, Node("us-a:0")).status()));

  HostOptions host;  // an UltraServer node without an emulated host is refused, not ignored
  host.emulate_ultraserver = Node("us-a:0");
  CHECK(absl::IsInvalidArgument(OpenHost(host).status()));
}

}  // namespace
}  // namespace neuron::inventory
