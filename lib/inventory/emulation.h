// File: lib/inventory/emulation.h
// Emulated mode (DESIGN.md §5): turns an instance shape into an emulated sysfs/PCI tree.
//
//   absl::StatusOr<std::string> root = inventory::PrepareEmulation("trn1.32xlarge", "");
//   auto fs = sysfs::MakeRootedFs(*root);   // then the normal code paths
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "lib/sysfs/emulator.h"
#include "lib/topology/topology.h"

namespace neuron::inventory {

// cores_per_device = logical cores at `lnc` (0 = family default). InvalidArgument for an LNC the
// family does not support.
absl::StatusOr<sysfs::EmulationSpec> BuildEmulationSpec(const topology::Shape& shape, int lnc = 0);

// Writes the tree of `instance_type` into `dir` ("" = a new mkdtemp dir under $TMPDIR or /tmp)
// and returns the root to use as --host-root. NotFound for an unknown instance type.
absl::StatusOr<std::string> PrepareEmulation(const std::string& instance_type,
                                             const std::string& dir = "", int lnc = 0);

}  // namespace neuron::inventory
