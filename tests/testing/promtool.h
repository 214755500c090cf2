// File: tests/testing/promtool.h
// Runs `promtool check metrics` (Debian package prometheus) on exposition text.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace neuron::testing {

// OK when promtool accepts `text`; FailedPrecondition with promtool's output otherwise;
// NotFound when promtool is not installed (scripts/setup-deps.sh installs it).
absl::Status PromtoolCheck(const std::string& text);

}  // namespace neuron::testing
