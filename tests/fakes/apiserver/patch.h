// File: tests/fakes/apiserver/patch.h
// The PATCH body formats kube-apiserver accepts, applied to an object's JSON.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace neuron::fakes::apiserver {

using json = nlohmann::json;

// application/merge-patch+json (RFC 7386): objects merge recursively, null deletes, everything
// else (arrays included) replaces.
json MergePatch(json target, const json& patch);

// application/json-patch+json (RFC 6902), including `test`. InvalidArgument when the patch is
// malformed or an operation fails (the caller answers 422, as upstream).
absl::StatusOr<json> JsonPatch(const json& target, const json& patch);

// application/strategic-merge-patch+json. Simplification of upstream's schema-driven strategy:
// a merge patch, except that lists of objects under a few well-known keys ("containers",
// "initContainers", "env", "volumes", "volumeMounts", "imagePullSecrets", "ports", "conditions")
// merge element-wise by their key ("name"; "containerPort" for ports; "type" for conditions), and
// `$patch: delete` on such an element removes it. Other directives ($retainKeys, $setElementOrder,
// $deleteFromPrimitiveList) are ignored.
json StrategicMergePatch(json target, const json& patch);

// Parses a request body that may be JSON or YAML (as application/apply-patch+yaml allows).
absl::StatusOr<json> ParseJsonOrYaml(const std::string& body);

}  // namespace neuron::fakes::apiserver
