#include "lib/k8s/errors.h"

#include <cstdlib>
#include <limits>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "nlohmann/json.hpp"

namespace neuron::k8s {
namespace {

absl::StatusCode CodeFor(int http, const std::string& reason) {
  switch (http) {
    case 400:
    case 422:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 405:
    case 406:
    case 415:
      return absl::StatusCode::kUnimplemented;
    case 409:
      return reason == "AlreadyExists" ? absl::StatusCode::kAlreadyExists
                                       : absl::StatusCode::kAborted;
    case 410:
      return absl::StatusCode::kOutOfRange;
    case 429:
      return absl::StatusCode::kUnavailable;
    case 504:
      return absl::StatusCode::kDeadlineExceeded;
    default:
      break;
  }
  if (http >= 500) return absl::StatusCode::kUnavailable;
  return absl::StatusCode::kUnknown;
}

absl::Status Build(int http, std::string reason, const std::string& message,
                   std::optional<int> retry_after) {
  if (http == 410 && reason.empty()) reason = "Expired";
  if (http == 409 && reason.empty()) reason = "Conflict";
  absl::Status s(CodeFor(http, reason),
                 absl::StrCat("k8s ", http, reason.empty() ? "" : " ", reason, ": ", message));
  if (!reason.empty()) s.SetPayload(kReasonPayload, absl::Cord(reason));
  if (retry_after) s.SetPayload(kRetryAfterPayload, absl::Cord(absl::StrCat(*retry_after)));
  return s;
}

}  // namespace

absl::Status StatusFromHttp(int http_code, absl::string_view body,
                            absl::string_view retry_after_header) {
  if (http_code >= 200 && http_code < 300) return absl::OkStatus();
  std::string reason;
  std::string message;
  std::optional<int> retry_after;
  auto j = nlohmann::json::parse(body.begin(), body.end(), nullptr, false);
  if (!j.is_discarded() && StringMember(j, "kind") == "Status") {
    reason = StringMember(j, "reason");
    message = StringMember(j, "message");
    // An int32 in the API; anything else is ignored.
    const int64_t secs = IntOf(MemberAt(j, {"details", "retryAfterSeconds"}), -1);
    if (secs >= 0 && secs <= std::numeric_limits<int>::max()) retry_after = static_cast<int>(secs);
  } else {
    message = std::string(body.substr(0, 256));
  }
  int secs = 0;
  if (!retry_after_header.empty() && absl::SimpleAtoi(retry_after_header, &secs) && secs >= 0) {
    retry_after = secs;
  }
  return Build(http_code, reason, message, retry_after);
}

absl::Status StatusFromWatchError(absl::string_view status_json) {
  auto j = nlohmann::json::parse(status_json.begin(), status_json.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InternalError("k8s watch: ERROR event without a Status object");
  }
  int code = 500;
  if (j.contains("code") && j["code"].is_number_integer()) code = j["code"].get<int>();
  if (code < 400) code = 500;
  std::string reason =
      j.contains("reason") && j["reason"].is_string() ? j["reason"].get<std::string>() : "";
  std::string message =
      j.contains("message") && j["message"].is_string() ? j["message"].get<std::string>() : "";
  return Build(code, reason, message, std::nullopt);
}

std::string K8sReason(const absl::Status& s) {
  auto p = s.GetPayload(kReasonPayload);
  return p ? std::string(*p) : std::string();
}

std::optional<int> RetryAfterSeconds(const absl::Status& s) {
  auto p = s.GetPayload(kRetryAfterPayload);
  int v = 0;
  if (p && absl::SimpleAtoi(std::string(*p), &v)) return v;
  return std::nullopt;
}

bool IsExpired(const absl::Status& s) {
  if (s.code() != absl::StatusCode::kOutOfRange) return false;
  const std::string r = K8sReason(s);
  return r == "Expired" || r == "Gone";
}
bool IsConflict(const absl::Status& s) { return s.code() == absl::StatusCode::kAborted; }

bool IsTerminal(const absl::Status& s) {
  return absl::IsInvalidArgument(s) || absl::IsFailedPrecondition(s);
}

absl::Status ExpiredError(absl::string_view message) {
  return Build(410, "Expired", std::string(message), std::nullopt);
}

}  // namespace neuron::k8s
