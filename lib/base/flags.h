// File: lib/base/flags.h
// Command-line flags in the spelling Kubernetes users expect (--host-root, --node-name), each
// optionally defaulted from an environment variable the AWS images use (PORT, NODE_NAME,
// KUBECONFIG). Precedence: explicit flag > environment > built-in default.
//
//   FlagSet flags("neuron-node-agent", "Serves Neuron device metrics and node labels.");
//   flags.String("node-name", &opts.node_name, "Kubernetes node name.", "NODE_NAME");
//   if (auto r = flags.Parse(argc, argv); r != FlagSet::kRun) return r == FlagSet::kHelp ? 0 : 2;
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace neuron {

class FlagSet {
 public:
  enum Outcome { kRun, kHelp, kError };

  FlagSet(std::string program, std::string summary);

  void String(const std::string& name, std::string* target, const std::string& help,
              const std::string& env = "");
  void Int(const std::string& name, int* target, const std::string& help,
           const std::string& env = "");
  void Bool(const std::string& name, bool* target, const std::string& help,
            const std::string& env = "");
  // Accepts Go-style durations: "500ms", "5s", "1m30s".
  void Duration(const std::string& name, absl::Duration* target, const std::string& help,
                const std::string& env = "");

  // Applies environment defaults, then argv (--name=value, --name value, --bool, --no-bool).
  // --help/-h prints Usage() to stdout -> kHelp. A bad flag prints one clear line to stderr
  // -> kError.
  Outcome Parse(int argc, char** argv);
  // Same, without printing: OK, or the error; sets *help when --help was given.
  absl::Status ParseArgs(const std::vector<std::string>& args, bool* help);
  std::string Usage() const;

 private:
  struct Flag {
    std::string name, help, env, default_text;
    bool is_bool = false;
    std::function<absl::Status(const std::string&)> set;
  };
  void Add(Flag flag);
  Flag* Find(const std::string& name);

  std::string program_, summary_;
  std::vector<Flag> flags_;
};

}  // namespace neuron
