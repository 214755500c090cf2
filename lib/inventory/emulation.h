// File: lib/inventory/emulation.h
// Emulated mode (DESIGN.md §5): turns an instance shape into an emulated sysfs/PCI tree.
//
//   absl::StatusOr<std::string> root = inventory::PrepareEmulation("trn1.32xlarge", "");
//   auto fs = sysfs::MakeRootedFs(*root);   // then the normal code paths
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "lib/sysfs/emulator.h"
#include "lib/topology/topology.h"
#include "lib/ultraserver/emulation.h"

namespace neuron::inventory {

// The driver's view of `shape`: cores_per_device = PHYSICAL cores (the driver is blind to LNC).
// `lnc` (0 = not given) only decides what the runtime would see: it is written to the tree's
// opt/aws/neuron/logical_nc_config. InvalidArgument for an LNC the family does not support.
// `scramble_seed`: sysfs::EmulationSpec::scramble_seed (0 = driver 2.30.2's layout).
// `ultraserver`: the node of an emulated UltraServer this host is (its class attributes);
// InvalidArgument unless the shape is kUltraServerShape. nullopt: the driver's values for a node
// outside any UltraServer.
absl::StatusOr<sysfs::EmulationSpec> BuildEmulationSpec(
    const topology::Shape& shape, int lnc = 0, uint64_t scramble_seed = 0,
    const std::optional<ultraserver::EmulatedNode>& ultraserver = std::nullopt);

// The only instance type an UltraServer node can be emulated as.
inline constexpr char kUltraServerShape[] = "trn2u.48xlarge";

// The --emulate-ultraserver flag of a process started with --emulate=`emulate`: "" -> nullopt;
// otherwise the parsed node (ultraserver::ParseEmulatedNode), or InvalidArgument (one line,
// naming the flags) when it does not parse or --emulate is not kUltraServerShape.
absl::StatusOr<std::optional<ultraserver::EmulatedNode>> ParseEmulateUltraServerFlag(
    const std::string& emulate, const std::string& flag);

// Where a default (temporary) emulated tree goes: the first of /dev/shm, $TMPDIR, /tmp that is
// a writable tmpfs with `need` bytes free, else $TMPDIR (or /tmp).
std::string EmulationTempParent(uint64_t need);
// A new mkdtemp directory under EmulationTempParent(need); logs which one.
absl::StatusOr<std::string> MakeEmulationTempDir(uint64_t need);

// Writes the tree of `instance_type` into `dir` ("" = MakeEmulationTempDir, on a tmpfs when
// one has room) and returns the root to use as --host-root. NotFound for an unknown instance
// type; `ultraserver` as for BuildEmulationSpec.
absl::StatusOr<std::string> PrepareEmulation(
    const std::string& instance_type, const std::string& dir = "", int lnc = 0,
    uint64_t scramble_seed = 0,
    const std::optional<ultraserver::EmulatedNode>& ultraserver = std::nullopt);

}  // namespace neuron::inventory
