// File: cmd/neuron-operator/subcommand.cc
#include "cmd/neuron-operator/subcommand.h"

#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

namespace neuron::op {

std::optional<int> ParseSubcommandFlags(FlagSet& flags, const char* command, int argc,
                                        char** argv) {
  std::vector<std::string> args = {command};
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-f" && i + 1 < argc) {
      args.push_back("--filename=" + std::string(argv[++i]));
    } else {
      args.push_back(a);
    }
  }
  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  const auto r = flags.Parse(static_cast<int>(cargs.size()), cargs.data());
  if (r == FlagSet::kRun) return std::nullopt;
  return r == FlagSet::kHelp ? 0 : 2;
}

absl::StatusOr<std::string> ReadInput(const std::string& file) {
  std::stringstream text;
  if (file == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(file);
    if (!in) return absl::NotFoundError("cannot read " + file);
    text << in.rdbuf();
  }
  return text.str();
}

}  // namespace neuron::op
