// File: tests/deviceplugin/allocator_test.cc
#include "lib/deviceplugin/allocator.h"

#include "catch2/catch.hpp"
#include "lib/topology/topology.h"
#include "tests/deviceplugin/fake_device_source.h"

namespace neuron::deviceplugin {
namespace {

using testing::SnapshotForShape;

std::vector<std::string> Strs(std::initializer_list<int> ids) {
  std::vector<std::string> out;
  for (int i : ids) out.push_back(std::to_string(i));
  return out;
}

std::vector<std::string> AllIds(const Allocator& a, const NodeSnapshot& n) {
  std::vector<std::string> out;
  for (const auto& d : a.Devices(n)) out.push_back(d.id);
  return out;
}

TEST_CASE("Devices advertises one ID per device or logical core", "[allocator]") {
  const NodeSnapshot trn1 = SnapshotForShape(*topology::FindShape("trn1.32xlarge"));
  Allocator dev(assignment::ResourceKind::kDevice);
  Allocator core(assignment::ResourceKind::kCore);
  CHECK(dev.Devices(trn1).size() == 16);
  CHECK(core.Devices(trn1).size() == 32);
  CHECK(core.Devices(trn1)[31].numa_node == trn1.devices[15].numa_node);

  NodeSnapshot trn2 = SnapshotForShape(*topology::FindShape("trn2.48xlarge"));  // LNC=2
  CHECK(core.Devices(trn2).size() == 64);
  trn2.devices[3].healthy = false;
  auto cores = core.Devices(trn2);
  CHECK_FALSE(cores[12].healthy);  // device 3 = logical cores 12..15
  CHECK_FALSE(cores[15].healthy);
  CHECK(cores[16].healthy);
}

TEST_CASE("Allocate returns device nodes and container-relative cores", "[allocator]") {
  const NodeSnapshot trn1 = SnapshotForShape(*topology::FindShape("trn1.32xlarge"));
  Allocator core(assignment::ResourceKind::kCore);
  auto a = core.Allocate(trn1, Strs({5, 6}));  // core 5 on device 2, core 6 on device 3
  REQUIRE(a.ok());
  REQUIRE(a->devices.size() == 2);
  CHECK(a->devices[0].container_path == "/dev/neuron2");
  CHECK(a->devices[0].host_path == "/dev/neuron2");
  CHECK(a->devices[0].permissions == "rw");
  CHECK(a->devices[1].container_path == "/dev/neuron3");
  // Inside the container: device 2 -> rank 0 (cores 0,1), device 3 -> rank 1 (cores 2,3).
  CHECK(a->envs.at("NEURON_RT_VISIBLE_CORES") == "1-2");
  CHECK(a->envs.at("AWS_NEURON_VISIBLE_DEVICES") == "2,3");

  Allocator host_core(assignment::ResourceKind::kCore, {"/", CoreNumbering::kHost});
  a = host_core.Allocate(trn1, Strs({5, 6}));
  REQUIRE(a.ok());
  CHECK(a->envs.at("NEURON_RT_VISIBLE_CORES") == "5-6");

  Allocator dev(assignment::ResourceKind::kDevice);
  a = dev.Allocate(trn1, Strs({8, 9, 10, 11}));
  REQUIRE(a.ok());
  CHECK(a->devices.size() == 4);
  CHECK(a->envs.at("NEURON_RT_VISIBLE_CORES") == "0-7");
}

TEST_CASE("host_path is the host's /dev/neuronN, or the emulated stand-in", "[allocator]") {
  const NodeSnapshot inf2 = SnapshotForShape(*topology::FindShape("inf2.48xlarge"));
  auto a = Allocator(assignment::ResourceKind::kDevice).Allocate(inf2, Strs({7}));
  REQUIRE(a.ok());
  CHECK(a->devices[0].host_path == "/dev/neuron7");  // resolved on the host by the runtime
  Allocator emu(assignment::ResourceKind::kDevice, {"/dev/null", CoreNumbering::kContainer});
  a = emu.Allocate(inf2, Strs({6, 7}));
  REQUIRE(a.ok());
  REQUIRE(a->devices.size() == 2);
  CHECK(a->devices[1].container_path == "/dev/neuron7");
  CHECK(a->devices[1].host_path == "/dev/null");
}

TEST_CASE("Allocate rejects bad requests with clear errors", "[allocator]") {
  NodeSnapshot inf2 = SnapshotForShape(*topology::FindShape("inf2.24xlarge"));  // 6 devices
  inf2.devices[2].healthy = false;
  Allocator dev(assignment::ResourceKind::kDevice);
  auto empty = dev.Allocate(inf2, {});
  CHECK(absl::IsInvalidArgument(empty.status()));
  CHECK(std::string(empty.status().message()).find("empty") != std::string::npos);
  auto unknown = dev.Allocate(inf2, Strs({6}));
  CHECK(absl::IsInvalidArgument(unknown.status()));
  CHECK(std::string(unknown.status().message()).find("unknown") != std::string::npos);
  auto dup = dev.Allocate(inf2, Strs({1, 1}));
  CHECK(absl::IsInvalidArgument(dup.status()));
  CHECK(std::string(dup.status().message()).find("duplicate") != std::string::npos);
  auto sick = dev.Allocate(inf2, Strs({2}));
  CHECK(absl::IsInvalidArgument(sick.status()));
  CHECK(std::string(sick.status().message()).find("unhealthy") != std::string::npos);
  auto too_many = dev.Allocate(inf2, Strs({0, 1, 2, 3, 4, 5, 0}));
  CHECK(absl::IsInvalidArgument(too_many.status()));
  CHECK_FALSE(dev.Allocate(inf2, {"x"}).ok());
  CHECK_FALSE(dev.Allocate(inf2, {"-1"}).ok());
}

TEST_CASE("Preferred follows the topology best fit and must_include", "[allocator]") {
  const NodeSnapshot trn1 = SnapshotForShape(*topology::FindShape("trn1.32xlarge"));
  Allocator dev(assignment::ResourceKind::kDevice);
  const auto all = AllIds(dev, trn1);
  auto p = dev.Preferred(trn1, all, {}, 4);
  REQUIRE(p.ok());
  std::vector<int> chosen;
  for (const auto& s : *p) chosen.push_back(std::stoi(s));
  CHECK(topology::IsValidDeviceSet(trn1.topology, chosen));
  // must_include forces the row containing device 9.
  p = dev.Preferred(trn1, all, {"9"}, 4);
  REQUIRE(p.ok());
  CHECK(*p == Strs({8, 9, 10, 11}));
}

TEST_CASE("Preferred uses the extender's choice when it still fits", "[allocator]") {
  const NodeSnapshot trn1 = SnapshotForShape(*topology::FindShape("trn1.32xlarge"));
  Allocator core(assignment::ResourceKind::kCore);
  const auto all = AllIds(core, trn1);
  auto p = core.Preferred(trn1, all, {}, 2, std::vector<int>{7, 6});
  REQUIRE(p.ok());
  CHECK(*p == Strs({6, 7}));
  // A hint of the wrong size or with unavailable IDs is ignored.
  p = core.Preferred(trn1, Strs({0, 1, 2, 3}), {}, 2, std::vector<int>{6, 7});
  REQUIRE(p.ok());
  CHECK(*p != Strs({6, 7}));
  CHECK(p->size() == 2);
}

TEST_CASE("Preferred rejects bad requests", "[allocator]") {
  const NodeSnapshot inf2 = SnapshotForShape(*topology::FindShape("inf2.48xlarge"));
  Allocator dev(assignment::ResourceKind::kDevice);
  CHECK(absl::IsInvalidArgument(dev.Preferred(inf2, Strs({0, 1}), {}, 3).status()));
  CHECK(absl::IsInvalidArgument(dev.Preferred(inf2, Strs({0, 1}), {}, 0).status()));
  CHECK(absl::IsInvalidArgument(dev.Preferred(inf2, Strs({0, 99}), {}, 1).status()));
  CHECK(absl::IsInvalidArgument(dev.Preferred(inf2, Strs({0, 0}), {}, 1).status()));
  CHECK(absl::IsInvalidArgument(dev.Preferred(inf2, Strs({0, 1}), Strs({2}), 1).status()));
}

TEST_CASE("Preferred and Allocate agree on every shape", "[allocator]") {
  for (const topology::Shape& shape : topology::AllShapes()) {
    INFO(shape.instance_type);
    const NodeSnapshot node = SnapshotForShape(shape);
    for (assignment::ResourceKind kind :
         {assignment::ResourceKind::kDevice, assignment::ResourceKind::kCore}) {
      Allocator a(kind);
      const auto all = AllIds(a, node);
      for (int size : {1, 2, static_cast<int>(all.size())}) {
        if (size > static_cast<int>(all.size())) continue;
        auto p = a.Preferred(node, all, {}, size);
        REQUIRE(p.ok());
        CHECK(static_cast<int>(p->size()) == size);
        auto alloc = a.Allocate(node, *p);
        REQUIRE(alloc.ok());
        CHECK(!alloc->devices.empty());
      }
    }
  }
}

}  // namespace
}  // namespace neuron::deviceplugin
