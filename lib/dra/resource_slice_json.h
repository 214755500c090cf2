// ResourceSlice models (resource_slice.h) as API objects. resource.k8s.io/v1 puts a device's
// fields on the device itself; v1beta1 (served for older clients up to 1.35) nests them under
// "basic". v1beta2 has v1's shape.
#ifndef NEURON_LIB_DRA_RESOURCE_SLICE_JSON_H_
#define NEURON_LIB_DRA_RESOURCE_SLICE_JSON_H_

#include <string>

#include "lib/dra/resource_slice.h"
#include "nlohmann/json.hpp"

namespace neuron::dra {

enum class ResourceApi { kV1, kV1beta1 };

nlohmann::json ResourceSliceJson(const ResourceSliceModel& slice, ResourceApi api);
// The same, serialised compactly; never throws (bytes that are not UTF-8 become U+FFFD).
std::string ResourceSliceJsonText(const ResourceSliceModel& slice, ResourceApi api);

// {"int": 3} / {"bool": true} / {"string": "x"} / {"version": "1.2.3"}.
nlohmann::json AttributeJson(const AttributeValue& value);

}  // namespace neuron::dra

#endif  // NEURON_LIB_DRA_RESOURCE_SLICE_JSON_H_
