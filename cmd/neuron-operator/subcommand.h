// File: cmd/neuron-operator/subcommand.h
// What the operator's subcommands (render, bundle, catalog) share: kubectl's `-f FILE`
// spelling for --filename, and reading that file or stdin.
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "lib/base/flags.h"

namespace neuron::op {

// Parses `argv` (without the program and subcommand words), taking `-f FILE` as
// --filename=FILE. nullopt = run; otherwise the exit code to return (0 after --help).
std::optional<int> ParseSubcommandFlags(FlagSet& flags, const char* command, int argc, char** argv);

// The whole of `file`, or of stdin for "-".
absl::StatusOr<std::string> ReadInput(const std::string& file);

}  // namespace neuron::op
