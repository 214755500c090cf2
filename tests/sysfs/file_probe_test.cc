// File: tests/sysfs/file_probe_test.cc
#include "lib/sysfs/file_probe.h"

#include "catch2/catch.hpp"
#include "tests/sysfs/temp_dir.h"

namespace neuron::sysfs {
namespace {

using testing::TempDir;

TEST_CASE("FileProbe reads prepared files each time they are asked", "[sysfs][probe]") {
  TempDir dir;
  dir.Write("a/count", "41\n");
  dir.Write("a/garbled", "x\n");
  dir.Symlink("../../drivers/neuron-driver", "dev/driver");
  auto fs = MakeRootedFs(dir.path());
  FileProbe probe(*fs);
  auto count = probe.Add("a/count");
  auto garbled = probe.Add("/a/./garbled");
  auto missing = probe.Add("a/missing");
  auto link = probe.Add("dev/driver");
  auto dir_a = probe.Add("a");
  REQUIRE(count.ok());
  REQUIRE(garbled.ok());
  REQUIRE(missing.ok());
  REQUIRE(link.ok());
  REQUIRE(dir_a.ok());
  CHECK(probe.Add("a/../../etc/passwd").status().code() == absl::StatusCode::kInvalidArgument);

  CHECK(probe.ReadU64(*count) == 41u);
  dir.Write("a/count", "42\n");  // a new value is seen on the next read
  CHECK(probe.ReadU64(*count) == 42u);
  CHECK_FALSE(probe.ReadU64(*garbled).has_value());
  CHECK_FALSE(probe.ReadU64(*missing).has_value());
  CHECK(probe.Exists(*dir_a));
  CHECK_FALSE(probe.Exists(*missing));
  CHECK(probe.LinkBasename(*link) == "neuron-driver");
  CHECK(probe.LinkBasename(*count).empty());  // not a symlink
  std::filesystem::remove(dir.path() + "/dev/driver");
  CHECK(probe.LinkBasename(*link).empty());
  std::filesystem::remove_all(dir.path() + "/a");
  CHECK_FALSE(probe.Exists(*dir_a));
  CHECK_FALSE(probe.ReadU64(*count).has_value());
}

}  // namespace
}  // namespace neuron::sysfs
