// File: tests/fakes/apiserver/protobuf_body.h
// Kubernetes' protobuf request bodies, as kubectl (>= 1.2x) and client-go's typed clients send
// them for built-in kinds: Content-Type application/vnd.kubernetes.protobuf, body = "k8s\0" +
// runtime.Unknown{typeMeta, raw = the object's own protobuf}. The fake decodes the kinds that
// kubectl's `create namespace|configmap|secret|serviceaccount` send into the same JSON it stores
// for JSON bodies.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace neuron::fakes::apiserver {

inline constexpr char kProtobufMediaType[] = "application/vnd.kubernetes.protobuf";
inline constexpr std::string_view kProtobufMagic{"k8s\0", 4};

// Decodes a protobuf body into the JSON object (apiVersion, kind, metadata, ...).
// kInvalidArgument: not a well-formed envelope or object (wrong magic, truncated, bad lengths,
// fields the fake does not know) -> HTTP 400. kUnimplemented: a well-formed envelope of a kind the
// fake cannot decode -> HTTP 415. Never throws.
absl::StatusOr<nlohmann::json> DecodeProtobufObject(std::string_view body);

}  // namespace neuron::fakes::apiserver
