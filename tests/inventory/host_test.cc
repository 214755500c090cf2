// File: tests/inventory/host_test.cc
// Emulation never hides real hardware: OpenHost refuses to emulate over a host root whose
// sysfs shows Neuron devices, and emulates where it shows none.
#include "lib/inventory/host.h"

#include <filesystem>
#include <string>

#include "catch2/catch.hpp"
#include "tests/sysfs/temp_dir.h"

namespace neuron::inventory {
namespace {

using sysfs::testing::TempDir;

TEST_CASE("emulation is refused over real Neuron devices", "[inventory][host]") {
  TempDir host;
  const std::string root = host.path();
  std::filesystem::create_directories(root + "/sys/class/neuron_device");
  CHECK(CheckNoRealDevices(root).ok());  // the class directory alone: no devices

  std::filesystem::create_directories(root + "/sys/class/neuron_device/neuron0");
  const absl::Status refused = CheckNoRealDevices(root);
  CHECK(refused.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(refused.message().find("1 real Neuron device") != std::string::npos);

  HostOptions opts;
  opts.host_root = root;
  opts.emulate = "trn1.2xlarge";
  absl::StatusOr<std::unique_ptr<WatchedHost>> opened = OpenHost(opts);
  REQUIRE_FALSE(opened.ok());
  CHECK(opened.status().code() == absl::StatusCode::kFailedPrecondition);

  TempDir bare;  // a node without the driver: emulation goes ahead
  opts.host_root = bare.path();
  TempDir tree;
  opts.emulate_dir = tree.path();
  opened = OpenHost(opts);
  REQUIRE(opened.ok());
  CHECK((*opened)->watcher->Current().devices.size() == 1);
}

}  // namespace
}  // namespace neuron::inventory
