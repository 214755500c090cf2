// File: lib/k8s/errors.h
// HTTP status + metav1.Status body -> absl::Status, keeping the API server's reason and message.
// Mapping: 400/422 InvalidArgument, 401 Unauthenticated, 403 PermissionDenied, 404 NotFound,
// 409 AlreadyExists (reason AlreadyExists) or Aborted (reason Conflict: re-GET and retry),
// 410 OutOfRange with reason "Expired" (relist), 429/5xx Unavailable (retry with backoff).
#pragma once

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace neuron::k8s {

// Status payload URL under which the metav1.Status `reason` is kept.
inline constexpr char kReasonPayload[] = "k8s.io/reason";
// Status payload URL under which details.retryAfterSeconds / Retry-After (seconds) is kept.
inline constexpr char kRetryAfterPayload[] = "k8s.io/retry-after";

// Builds the absl::Status for an HTTP error response. `body` may be a metav1.Status JSON or
// anything else (then the body's first bytes become the message). `retry_after_header` is the
// raw Retry-After header value ("" if absent). Returns OkStatus for 2xx.
absl::Status StatusFromHttp(int http_code, absl::string_view body,
                            absl::string_view retry_after_header = "");

// Builds the absl::Status for an in-stream watch ERROR event's metav1.Status object (JSON text).
absl::Status StatusFromWatchError(absl::string_view status_json);

// The metav1.Status reason carried by `s` ("" if none), e.g. "Conflict", "Expired", "NotFound".
std::string K8sReason(const absl::Status& s);
// Retry-After seconds carried by `s`, if the server sent one.
std::optional<int> RetryAfterSeconds(const absl::Status& s);

// 410 Gone/Expired (HTTP or in-stream): the resourceVersion is too old; relist.
bool IsExpired(const absl::Status& s);
// 409 Conflict on update: stale resourceVersion; re-GET, re-apply, retry.
bool IsConflict(const absl::Status& s);
// (For 404 / 409 AlreadyExists use absl::IsNotFound / absl::IsAlreadyExists.)
// The server refused the request itself (422 Invalid, 400, a precondition): sending it again
// gives the same answer, so it waits for the input to change instead of a backoff retry.
bool IsTerminal(const absl::Status& s);

// An Expired status as the watch machinery produces it (for fakes / tests).
absl::Status ExpiredError(absl::string_view message);

}  // namespace neuron::k8s
