#include <filesystem>

#include "catch2/catch.hpp"
#include "lib/sysfs/fs.h"
#include "tests/sysfs/temp_dir.h"

namespace neuron::sysfs {
namespace {

using testing::TempDir;

TEST_CASE("NormalizeRelative collapses and refuses escapes", "[sysfs][fs]") {
  CHECK(*NormalizeRelative("sys//class/./neuron_device/") == "sys/class/neuron_device");
  CHECK(*NormalizeRelative("/sys/a/../b") == "sys/b");
  CHECK(*NormalizeRelative("") == "");
  CHECK(*NormalizeRelative("a/..") == "");
  CHECK(absl::IsInvalidArgument(NormalizeRelative("..").status()));
  CHECK(absl::IsInvalidArgument(NormalizeRelative("sys/../../etc/passwd").status()));
  CHECK(absl::IsInvalidArgument(NormalizeRelative("/../x").status()));
  CHECK(absl::IsInvalidArgument(NormalizeRelative(std::string("a\0b", 3)).status()));
}

TEST_CASE("RootedFs reads files, dirs and links below its root", "[sysfs][fs]") {
  TempDir dir;
  dir.Write("sys/class/neuron_device/neuron0/core_count", "2");
  dir.Write("sys/class/neuron_device/neuron1/core_count", "2");
  dir.Symlink("../../../bus/pci/drivers/neuron-driver", "sys/devices/x/driver");
  auto fs = MakeRootedFs(dir.path() + "/");
  CHECK(fs->root() == dir.path());

  auto text = fs->ReadFile("sys/class/neuron_device/neuron0/core_count");
  REQUIRE(text.ok());
  CHECK(*text == "2");
  CHECK(*fs->ReadFile("/sys/class/neuron_device/neuron0/core_count") == "2");

  auto names = fs->ListDir("sys/class/neuron_device");
  REQUIRE(names.ok());
  CHECK(*names == std::vector<std::string>{"neuron0", "neuron1"});

  auto link = fs->ReadLink("sys/devices/x/driver");
  REQUIRE(link.ok());
  CHECK(*link == "../../../bus/pci/drivers/neuron-driver");

  CHECK(fs->Exists("sys/class"));
  CHECK_FALSE(fs->Exists("sys/nothing"));
}

TEST_CASE("RootedFs maps errors to Status codes", "[sysfs][fs]") {
  TempDir dir;
  dir.Write("sys/file", "x");
  auto fs = MakeRootedFs(dir.path());
  CHECK(absl::IsNotFound(fs->ReadFile("sys/missing").status()));
  CHECK(absl::IsNotFound(fs->ListDir("sys/missing").status()));
  CHECK(absl::IsNotFound(fs->ReadLink("sys/missing").status()));
  CHECK(absl::IsInvalidArgument(fs->ReadFile("sys").status()));       // a directory
  CHECK(absl::IsInvalidArgument(fs->ListDir("sys/file").status()));   // not a directory
  CHECK(absl::IsInvalidArgument(fs->ReadLink("sys/file").status()));  // not a link
  // Escapes are refused before touching the disk, even if the target exists.
  CHECK(absl::IsInvalidArgument(
      fs->ReadFile("../" + std::filesystem::path(dir.path()).filename().string() + "/sys/file")
          .status()));
  CHECK(absl::IsInvalidArgument(fs->ListDir("sys/../..").status()));
  CHECK_FALSE(fs->Exists("../"));
}

TEST_CASE("RootedFs at / reads the real filesystem", "[sysfs][fs]") {
  auto fs = MakeRootedFs("/");
  CHECK(fs->root() == "/");
  CHECK(fs->Exists("proc/self"));
  auto status = fs->ReadFile("proc/self/status");
  REQUIRE(status.ok());
  CHECK(status->find("Name:") != std::string::npos);
}

}  // namespace
}  // namespace neuron::sysfs
