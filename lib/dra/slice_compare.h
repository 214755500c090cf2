// Comparing a ResourceSlice spec we render (resource_slice_json.h) with one the API server
// holds, for the publisher's "nothing changed, write nothing" check. Pure.
//
// The one field the server fills on its own is a device taint's timeAdded ("added automatically
// during create or update if not set", resource.k8s.io/v1 types.go): a rendered taint without
// it matches a stored one with it, and re-applying must carry the stored time forward, as
// upstream's resourceslice controller does (copyTaintTimeAdded), or every update would look
// like a new taint. Works on v1 (fields on the device) and v1beta1 (fields under "basic").
#ifndef NEURON_LIB_DRA_SLICE_COMPARE_H_
#define NEURON_LIB_DRA_SLICE_COMPARE_H_

#include "nlohmann/json.hpp"

namespace neuron::dra {

// True when `stored` equals `rendered` once taint times the renderer left out are ignored.
// Both are ResourceSlice specs; anything malformed simply compares unequal.
bool SameSliceSpec(const nlohmann::json& rendered, const nlohmann::json& stored);

// Gives each taint of `rendered` that has no timeAdded the timeAdded of the stored taint with
// the same device name, key, value and effect, if there is one.
void KeepTaintTimes(nlohmann::json& rendered, const nlohmann::json& stored);

}  // namespace neuron::dra

#endif  // NEURON_LIB_DRA_SLICE_COMPARE_H_
