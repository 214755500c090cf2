// File: lib/base/logging.h
// One spdlog logger per binary, on stderr, one line per event with key=value context:
//   spdlog::info("allocated devices={} pod={}", ids, pod);
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace neuron {

// Installs the default logger named `program`. `level` is one of trace, debug, info, warn,
// error, critical, off. With `json_lines`, each line is a JSON object (ts, level, logger, msg).
absl::Status InitLogging(std::string_view program, std::string_view level, bool json_lines = false);

}  // namespace neuron
