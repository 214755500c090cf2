// File: tests/deviceplugin/silicon_ledger_test.cc
// SiliconLedger without gRPC: a settable PodResources list and a fake clock.
#include "lib/deviceplugin/silicon_ledger.h"

#include "catch2/catch.hpp"
#include "tests/deviceplugin/fake_device_source.h"
#include "tests/fakes/fake_clock.h"

namespace neuron::deviceplugin {
namespace {

using testing::SnapshotForShape;

struct Fixture {
  absl::StatusOr<std::vector<PodHoldings>> listed = std::vector<PodHoldings>{};
  fakes::FakeClock clock;
  SiliconLedger ledger{[this] { return listed; }, clock, absl::Seconds(30)};
  NodeSnapshot node = SnapshotForShape(*topology::FindShape("trn1.32xlarge"));  // 16 x 2
};

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST_CASE("DeviceOf maps core IDs to their device", "[ledger]") {
  const NodeSnapshot node = SnapshotForShape(*topology::FindShape("trn1.32xlarge"));
  CHECK(DeviceOf(assignment::ResourceKind::kDevice, 7, node) == 7);
  CHECK(DeviceOf(assignment::ResourceKind::kCore, 7, node) == 3);
  CHECK(DeviceOf(assignment::ResourceKind::kCore, 0, NodeSnapshot{}) == -1);
}

TEST_CASE("Listed holdings block the other resource only", "[ledger]") {
  Fixture f;
  f.listed = std::vector<PodHoldings>{{"ml", "a", {{assignment::ResourceKind::kDevice, {3}}}}};
  absl::Status s = f.ledger.Claim(assignment::ResourceKind::kCore, f.node, {6, 9});
  REQUIRE(absl::IsFailedPrecondition(s));
  CHECK(Message(s).find("device 3") != std::string::npos);
  CHECK(Message(s).find("IDs 6)") != std::string::npos);
  CHECK(Message(s).find("pod ml/a") != std::string::npos);
  CHECK(f.ledger.Claim(assignment::ResourceKind::kCore, f.node, {8, 9}).ok());
  // Same resource: the kubelet's own accounting, not ours.
  CHECK(f.ledger.Claim(assignment::ResourceKind::kDevice, f.node, {3}).ok());
  const auto held =
      f.ledger.HeldByOther(assignment::ResourceKind::kDevice, f.node);  // cores 8, 9 recent
  CHECK(held.size() == 1);
  CHECK(held.count(4) == 1);
}

TEST_CASE("Recent claims expire, or leave once PodResources lists them", "[ledger]") {
  Fixture f;
  REQUIRE(f.ledger.Claim(assignment::ResourceKind::kDevice, f.node, {0}).ok());
  REQUIRE(f.ledger.Claim(assignment::ResourceKind::kDevice, f.node, {0}).ok());  // retry: one entry
  CHECK(f.ledger.recent_count() == 1);
  CHECK_FALSE(f.ledger.Claim(assignment::ResourceKind::kCore, f.node, {1}).ok());
  f.clock.Advance(absl::Seconds(31));
  CHECK(
      f.ledger.Claim(assignment::ResourceKind::kCore, f.node, {1}).ok());  // device 0's core 1 now
  CHECK(f.ledger.recent_count() == 1);

  // Listed by the kubelet: the entry goes; the pod's holding now blocks; its end frees it.
  f.listed = std::vector<PodHoldings>{{"ml", "b", {{assignment::ResourceKind::kCore, {1}}}}};
  absl::Status s = f.ledger.Claim(assignment::ResourceKind::kDevice, f.node, {0});
  CHECK(Message(s).find("pod ml/b") != std::string::npos);
  CHECK(f.ledger.recent_count() == 0);
  f.listed = std::vector<PodHoldings>{};
  CHECK(f.ledger.Claim(assignment::ResourceKind::kDevice, f.node, {0}).ok());
}

TEST_CASE("A failing PodResources List falls back to recent claims", "[ledger]") {
  Fixture f;
  REQUIRE(f.ledger.Claim(assignment::ResourceKind::kCore, f.node, {31}).ok());
  f.listed = absl::UnavailableError("no socket");
  CHECK_FALSE(f.ledger.Claim(assignment::ResourceKind::kDevice, f.node, {15}).ok());
  CHECK(f.ledger.Claim(assignment::ResourceKind::kDevice, f.node, {14}).ok());
  CHECK(f.ledger.HeldByOther(assignment::ResourceKind::kCore, f.node).count(14) == 1);
}

}  // namespace
}  // namespace neuron::deviceplugin
