// File: lib/ultraserver/read_identity.h
// Reads a node's UltraServer identity from the Neuron driver's class attributes. Kept apart from
// identity.h so that the extender, which only reads labels, links no sysfs and no libpci.
#pragma once

#include <optional>

#include "absl/status/statusor.h"
#include "lib/sysfs/fs.h"
#include "lib/ultraserver/identity.h"

namespace neuron::ultraserver {

// Reads the class attributes under `fs`. nullopt: not an UltraServer node (files absent, or the
// driver lists no mode). Unavailable while the driver is busy or a read fails with I/O;
// InvalidArgument (naming the file) for garbage.
absl::StatusOr<std::optional<Identity>> ReadIdentity(const sysfs::Fs& fs);

}  // namespace neuron::ultraserver
