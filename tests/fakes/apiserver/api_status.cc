// File: tests/fakes/apiserver/api_status.cc
#include "tests/fakes/apiserver/api_status.h"

#include <cstdio>
#include <ctime>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace neuron::fakes::apiserver {

json ApiError::ToStatus() const {
  json s = {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
            {"status", "Failure"}, {"message", message}, {"reason", reason},
            {"code", code}};
  if (reason.empty()) s.erase("reason");  // a Status a handler returned, not an error it made
  json d = details.is_object() ? details : json::object();
  if (retry_after_s > 0) d["retryAfterSeconds"] = retry_after_s;
  if (!d.empty()) s["details"] = d;
  return s;
}

std::string ReasonForCode(int code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 406:
      return "NotAcceptable";
    case 409:
      return "Conflict";
    case 410:
      return "Expired";
    case 413:
      return "RequestEntityTooLarge";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return code >= 500 ? "InternalError" : "Unknown";
  }
}

ApiError MakeError(int code, const std::string& message) {
  return ApiError{code, ReasonForCode(code), message, nullptr, 0};
}

std::string QualifiedResource(const std::string& group, const std::string& resource) {
  return group.empty() ? resource : absl::StrCat(resource, ".", group);
}

namespace {
json Details(const std::string& group, const std::string& kind, const std::string& name) {
  json d = {{"name", name}, {"kind", kind}};
  if (!group.empty()) d["group"] = group;
  return d;
}
}  // namespace

ApiError NotFound(const std::string& group, const std::string& resource, const std::string& name) {
  return ApiError{404, "NotFound",
                  absl::StrCat(QualifiedResource(group, resource), " \"", name, "\" not found"),
                  Details(group, resource, name), 0};
}

ApiError AlreadyExists(const std::string& group, const std::string& resource,
                       const std::string& name) {
  return ApiError{
      409, "AlreadyExists",
      absl::StrCat(QualifiedResource(group, resource), " \"", name, "\" already exists"),
      Details(group, resource, name), 0};
}

ApiError Conflict(const std::string& group, const std::string& resource, const std::string& name,
                  const std::string& why) {
  return ApiError{409, "Conflict",
                  absl::StrCat("Operation cannot be fulfilled on ",
                               QualifiedResource(group, resource), " \"", name, "\": ", why),
                  Details(group, resource, name), 0};
}

ApiError BadRequest(const std::string& message) { return MakeError(400, message); }

ApiError Invalid(const std::string& group, const std::string& kind, const std::string& name,
                 const std::string& message) {
  return ApiError{
      422, "Invalid",
      absl::StrCat(kind, ".", group.empty() ? "" : group, " \"", name, "\" is invalid: ", message),
      Details(group, kind, name), 0};
}

ApiError Expired(const std::string& message) {
  return ApiError{410, "Expired", message, nullptr, 0};
}

std::string NowRfc3339() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {
absl::Mutex rng_mu;
std::mt19937_64& Rng() {
  static std::mt19937_64 rng{std::random_device{}()};
  return rng;
}
}  // namespace

std::string NewUid() {
  uint64_t a, b;
  {
    absl::MutexLock lock(&rng_mu);
    a = Rng()();
    b = Rng()();
  }
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // variant 10
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xffff),
                static_cast<unsigned>(b >> 48),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

std::string RandomSuffix(int n) {
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  absl::MutexLock lock(&rng_mu);
  for (int i = 0; i < n; ++i) out.push_back(kAlphabet[Rng()() % (sizeof kAlphabet - 1)]);
  return out;
}

int64_t ParseRv(const std::string& s) {
  if (s.empty()) return -1;
  int64_t v = 0;
  if (!absl::SimpleAtoi(s, &v) || v < 0) return -2;
  return v;
}

}  // namespace neuron::fakes::apiserver
