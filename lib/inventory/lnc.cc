// File: lib/inventory/lnc.cc
#include "lib/inventory/lnc.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "lib/sysfs/parsers.h"

namespace neuron::inventory {
namespace {

absl::Status CheckForChip(int value, const std::string& origin,
                          const std::optional<topology::DeviceModel>& model) {
  if (value != 1 && value != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": LNC ", value, " is not supported (1 or 2)"));
  }
  if (value == 2 && model && !model->lnc_capable) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": LNC 2 is not supported on ",
                                                   topology::FamilyName(model->family),
                                                   " (only Trainium2 and later group cores)"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string LncSourceName(LncSource s) {
  switch (s) {
    case LncSource::kFlag:
      return "flag";
    case LncSource::kEnv:
      return "env";
    case LncSource::kFile:
      return "file";
    case LncSource::kDefault:
      return "default";
  }
  return "default";
}

LncInputs LncInputs::FromEnvironment(int flag) {
  LncInputs in;
  in.flag = flag;
  if (const char* v = std::getenv(kLncEnvVar); v != nullptr) in.env = v;
  return in;
}

absl::Status ValidateLncFlag(int flag) {
  if (flag == 0) return absl::OkStatus();
  return CheckForChip(flag, "--lnc", std::nullopt);
}

absl::StatusOr<LncSetting> ResolveLnc(const sysfs::Fs& fs, const LncInputs& in,
                                      const std::optional<topology::DeviceModel>& model) {
  LncSetting s;
  if (in.flag != 0) {
    s = {in.flag, LncSource::kFlag, "--lnc"};
  } else if (in.env) {
    auto v = sysfs::ParseLncValue(*in.env);
    if (!v.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(kLncEnvVar, ": not an LNC value (", v.status().message(), ")"));
    }
    s = {*v, LncSource::kEnv, kLncEnvVar};
  } else {
    const std::string origin = absl::StrCat("/", kLncHostFile);
    auto text = fs.ReadFile(kLncHostFile);
    if (text.ok()) {
      auto v = sysfs::ParseLogicalNcConfig(*text);
      if (!v.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(origin, " (under host root ", fs.root(), "): ", v.status().message()));
      }
      s = {*v, LncSource::kFile, origin};
    } else if (!absl::IsNotFound(text.status())) {
      return absl::UnavailableError(
          absl::StrCat(origin, " (under host root ", fs.root(), "): ", text.status().message()));
    } else {
      const int def = model ? model->default_lnc : 1;
      return LncSetting{
          def, LncSource::kDefault,
          model ? absl::StrCat("default for ", topology::FamilyName(model->family)) : "default"};
    }
  }
  if (absl::Status st = CheckForChip(s.value, s.origin, model); !st.ok()) return st;
  return s;
}

}  // namespace neuron::inventory
