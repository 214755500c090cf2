// File: tests/fakes/apiserver/api_status.h
// metav1.Status error bodies as kube-apiserver writes them, plus small helpers shared by the fake
// apiserver's parts (uids, timestamps, resourceVersion strings).
#pragma once

#include <cstdint>
#include <string>

#include "nlohmann/json.hpp"

namespace neuron::fakes::apiserver {

using json = nlohmann::json;

// An API error: HTTP code + metav1.Status fields.
struct ApiError {
  int code = 500;
  std::string reason;      // e.g. "NotFound", "Conflict", "AlreadyExists", "Expired"
  std::string message;     // human text, same wording as upstream where we know it
  json details = nullptr;  // {name, group, kind, causes[]} or null
  int retry_after_s = 0;

  json ToStatus() const;  // {"kind":"Status","apiVersion":"v1","status":"Failure",...}
};

// The upstream reason for an HTTP code (404 -> NotFound, 409 -> Conflict, 410 -> Expired, ...).
std::string ReasonForCode(int code);
ApiError MakeError(int code, const std::string& message);
// `resource` is the group-qualified resource ("pods", "deployments.apps") as upstream prints it.
ApiError NotFound(const std::string& group, const std::string& resource, const std::string& name);
ApiError AlreadyExists(const std::string& group, const std::string& resource,
                       const std::string& name);
ApiError Conflict(const std::string& group, const std::string& resource, const std::string& name,
                  const std::string& why);
ApiError BadRequest(const std::string& message);
ApiError Invalid(const std::string& group, const std::string& kind, const std::string& name,
                 const std::string& message);
ApiError Expired(const std::string& message);

// "pods" for the core group, "deployments.apps" otherwise.
std::string QualifiedResource(const std::string& group, const std::string& resource);

std::string NowRfc3339();         // "2024-01-02T03:04:05Z"
std::string NewUid();             // random RFC 4122 v4 uuid
std::string RandomSuffix(int n);  // generateName suffix alphabet (no vowels)
// Parses a resourceVersion string; -1 if empty, -2 if malformed.
int64_t ParseRv(const std::string& s);

}  // namespace neuron::fakes::apiserver
