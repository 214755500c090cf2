// File: tests/fakes/apiserver/schema_required.h
// The `required` rules of a CRD version's openAPIV3Schema, as kube-apiserver enforces them on
// every create and update of a custom resource written at that version. Only `required` (and
// the properties/items it sits under) is checked; types, patterns and CEL are not (a
// simplification: our clients' schemas are checked by their own tests).
#pragma once

#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace neuron::fakes::apiserver {

// "spec.customSchedulerImage: Required value" for each required property missing from `obj`,
// in schema order. `schema` null or not an object: nothing is required.
// On update, `old` is the stored object: a subtree equal to the old one is not checked, as
// kube-apiserver's validation ratcheting (CRDValidationRatcheting, on by default since 1.30)
// lets an update through that leaves invalid parts unchanged (a finalizer added to an object
// written at another version, say).
std::vector<std::string> MissingRequired(const nlohmann::json& schema, const nlohmann::json& obj,
                                         const nlohmann::json* old = nullptr);

}  // namespace neuron::fakes::apiserver
