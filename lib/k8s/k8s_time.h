// File: lib/k8s/k8s_time.h
// metav1.Time (RFC3339, seconds) and metav1.MicroTime ("2006-01-02T15:04:05.000000Z") text forms.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace neuron::k8s {

// "2006-01-02T15:04:05Z" (UTC, whole seconds) as metav1.Time marshals.
std::string FormatRfc3339(absl::Time t);
// "2006-01-02T15:04:05.000000Z" (UTC, microseconds) as metav1.MicroTime marshals.
std::string FormatMicroTime(absl::Time t);
// Parses RFC3339 with optional fractional seconds and any offset.
absl::StatusOr<absl::Time> ParseTime(absl::string_view s);

}  // namespace neuron::k8s
