// File: lib/operator/device_config_cache.h
// spec.compileCache (compiled-model caches on the nodes): read from the spec and checked, for
// device_config.cc.
#pragma once

#include <vector>

#include "lib/operator/device_config.h"
#include "nlohmann/json.hpp"

namespace neuron::op::internal {

// spec.compileCache {enabled, hostPath} into `s.compile_cache`; absent keeps the defaults.
void ReadCompileCache(const nlohmann::json& spec, DeviceConfigSpec& s,
                      std::vector<FieldError>& problems);

// hostPath is an absolute directory path (no '..', no whitespace) and not the root.
void CheckCompileCache(const DeviceConfigSpec& s, std::vector<FieldError>& errors);

}  // namespace neuron::op::internal
