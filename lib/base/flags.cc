#include "lib/base/flags.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/base/env.h"

namespace neuron {

FlagSet::FlagSet(std::string program, std::string summary)
    : program_(std::move(program)), summary_(std::move(summary)) {}

void FlagSet::Add(Flag flag) { flags_.push_back(std::move(flag)); }

FlagSet::Flag* FlagSet::Find(const std::string& name) {
  for (auto& f : flags_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

void FlagSet::String(const std::string& name, std::string* target, const std::string& help,
                     const std::string& env) {
  Add({name, help, env, absl::StrCat("\"", *target, "\""), false, [target](const std::string& v) {
         *target = v;
         return absl::OkStatus();
       }});
}

void FlagSet::Int(const std::string& name, int* target, const std::string& help,
                  const std::string& env) {
  Add({name, help, env, std::to_string(*target), false, [name, target](const std::string& v) {
         if (!absl::SimpleAtoi(v, target)) {
           return absl::InvalidArgumentError(
               absl::StrCat("--", name, ": \"", v, "\" is not an integer"));
         }
         return absl::OkStatus();
       }});
}

void FlagSet::Bool(const std::string& name, bool* target, const std::string& help,
                   const std::string& env) {
  Add({name, help, env, *target ? "true" : "false", true, [name, target](const std::string& v) {
         if (!absl::SimpleAtob(v, target)) {
           return absl::InvalidArgumentError(
               absl::StrCat("--", name, ": \"", v, "\" is not true or false"));
         }
         return absl::OkStatus();
       }});
}

void FlagSet::Duration(const std::string& name, absl::Duration* target, const std::string& help,
                       const std::string& env) {
  Add({name, help, env, absl::FormatDuration(*target), false, [name, target](const std::string& v) {
         absl::Duration d;
         if (!absl::ParseDuration(v, &d) || d <= absl::ZeroDuration()) {
           return absl::InvalidArgumentError(absl::StrCat(
               "--", name, ": \"", v, "\" is not a positive duration (e.g. 500ms, 5s, 1m)"));
         }
         *target = d;
         return absl::OkStatus();
       }});
}

absl::Status FlagSet::ParseArgs(const std::vector<std::string>& args, bool* help) {
  *help = false;
  for (auto& f : flags_) {
    if (f.env.empty()) continue;
    const std::string value = EnvOr(f.env.c_str(), "");
    if (value.empty()) continue;
    if (absl::Status s = f.set(value); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("environment ", f.env, ": ", s.message()));
    }
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "--help" || arg == "-help") {
      *help = true;
      return absl::OkStatus();
    }
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument \"", arg, "\" (flags look like --name=value)"));
    }
    std::string name = arg.substr(2);
    std::string value;
    bool has_value = false;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    for (char& c : name) c = c == '_' ? '-' : c;  // accept --host_root as --host-root
    Flag* flag = Find(name);
    if (flag == nullptr && !has_value && name.rfind("no-", 0) == 0) {
      Flag* negated = Find(name.substr(3));
      if (negated != nullptr && negated->is_bool) {
        if (absl::Status s = negated->set("false"); !s.ok()) return s;
        continue;
      }
    }
    if (flag == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name, " (see --help)"));
    }
    if (!has_value) {
      if (flag->is_bool) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return absl::InvalidArgumentError(absl::StrCat("flag --", name, " needs a value"));
      }
    }
    if (absl::Status s = flag->set(value); !s.ok()) return s;
  }
  return absl::OkStatus();
}

FlagSet::Outcome FlagSet::Parse(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  bool help = false;
  const absl::Status s = ParseArgs(args, &help);
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", program_.c_str(), std::string(s.message()).c_str());
    return kError;
  }
  if (help) {
    std::fputs(Usage().c_str(), stdout);
    return kHelp;
  }
  return kRun;
}

std::string FlagSet::Usage() const {
  std::string out = absl::StrCat("Usage: ", program_, " [flags]\n\n", summary_, "\n\nFlags:\n");
  for (const auto& f : flags_) {
    absl::StrAppend(&out, "  --", f.name, f.is_bool ? "" : "=VALUE", "\n      ", f.help,
                    " (default ", f.default_text, f.env.empty() ? "" : "; env " + f.env, ")\n");
  }
  absl::StrAppend(&out, "  --help\n      Show this help.\n");
  return out;
}

}  // namespace neuron
