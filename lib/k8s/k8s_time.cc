#include "lib/k8s/k8s_time.h"

#include "absl/strings/str_cat.h"

namespace neuron::k8s {

std::string FormatRfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

std::string FormatMicroTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

absl::StatusOr<absl::Time> ParseTime(absl::string_view s) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, s, &t, &err)) {
    return absl::InvalidArgumentError(absl::StrCat("bad time \"", s, "\": ", err));
  }
  return t;
}

}  // namespace neuron::k8s
