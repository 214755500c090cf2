// File: lib/operator/device_config_emulation.h
// spec.emulation (a DeviceConfig for clusters without Neuron hardware): read from the spec and
// checked, for device_config.cc; and what it adds to the plugin's, DRA driver's and node
// agent's pods, for the children builders.
#pragma once

#include <vector>

#include "lib/operator/device_config.h"
#include "nlohmann/json.hpp"

namespace neuron::op::internal {

// spec.emulation into `s` (and driverMode to preinstalled: an emulated node has no driver).
void ReadEmulation(const nlohmann::json& spec, DeviceConfigSpec& s,
                   std::vector<FieldError>& problems);

// An instance type we model, an LNC it supports, and no AWS DRA driver (it cannot emulate).
void CheckEmulation(const DeviceConfigSpec& s, std::vector<FieldError>& errors);

// With spec.emulation: --emulate (and --lnc) on `container`, its tree in an emptyDir (the root
// filesystem is read-only) added to `container` and `volumes`. Without: nothing.
void AddEmulation(const DeviceConfig& dc, nlohmann::json& container, nlohmann::json& volumes);

// With spec.emulation: keeps the pod off nodes that have real Neuron devices (by NFD's labels
// and the instance type), so emulation never hides real hardware.
void AvoidNeuronNodes(const DeviceConfig& dc, nlohmann::json& pod_spec);

}  // namespace neuron::op::internal
