// File: lib/operator/device_config_dra.h
// How a DeviceConfig allocates devices (spec.allocation, spec.dra, draDriverImage) and which
// plugin/scheduler images that mode needs: read from the spec and checked, for
// device_config.cc. Kept apart so the combinations live in one place.
#pragma once

#include <vector>

#include "lib/operator/device_config.h"
#include "nlohmann/json.hpp"

namespace neuron::op::internal {

// spec.allocation and spec.dra into `s`; wrong types and unknown values become problems.
void ReadAllocation(const nlohmann::json& spec, DeviceConfigSpec& s,
                    std::vector<FieldError>& problems);

// The contradictions between draDriverImage, allocation, dra and the device plugin,
// scheduler and extender images (the CRD's CEL rules, and what must advertise devices).
void CheckAllocation(const DeviceConfigSpec& s, std::vector<FieldError>& errors);

}  // namespace neuron::op::internal
