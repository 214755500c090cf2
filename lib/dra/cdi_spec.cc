#include "lib/dra/cdi_spec.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/dra/atomic_file.h"

namespace neuron::dra {
namespace {

constexpr size_t kMaxClaimUid = 128;  // UIDs are 36; keeps file names short

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// CDI's device-name rule (v0.5+): starts and ends with a letter or digit; '_', '-', '.', ':'
// between. It also rules out '/' and hence any path escape in the file name.
absl::Status CheckClaimUid(absl::string_view uid) {
  bool ok =
      !uid.empty() && uid.size() <= kMaxClaimUid && IsAlnum(uid.front()) && IsAlnum(uid.back());
  for (char c : uid) ok = ok && (IsAlnum(c) || c == '_' || c == '-' || c == '.' || c == ':');
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("claim UID \"", uid, "\" cannot name a CDI device (letters, digits, _-.: )"));
}

nlohmann::json DeviceNodes(const ClaimDevices& claim) {
  nlohmann::json nodes = nlohmann::json::array();
  std::vector<int> devices = claim.devices;
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  for (int d : devices) {
    const std::string path = absl::StrCat("/dev/neuron", d);
    nodes.push_back({{"path", path},
                     {"hostPath", claim.device_host_path.empty() ? path : claim.device_host_path},
                     {"permissions", "rw"}});
  }
  return nodes;
}

nlohmann::json Env(const ClaimDevices& claim) {
  nlohmann::json env = nlohmann::json::array();
  if (!claim.visible_cores.empty()) {
    env.push_back(absl::StrCat("NEURON_RT_VISIBLE_CORES=", FormatCoreRanges(claim.visible_cores)));
  }
  if (claim.logical_nc_config) {
    env.push_back(absl::StrCat("NEURON_LOGICAL_NC_CONFIG=", *claim.logical_nc_config));
  }
  for (const auto& [name, value] : claim.env) {
    env.push_back(absl::StrCat(name, "=", value));
  }
  return env;
}

// Absolute and printable ASCII: the spec is written verbatim and must parse back the same.
absl::Status CheckMountPath(absl::string_view what, absl::string_view path) {
  bool ok = !path.empty() && path.front() == '/';
  for (char c : path) ok = ok && c >= 0x20 && c <= 0x7e;
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("mount ", what, " \"", path.substr(0, 64),
                                                 "\" is not an absolute path in printable ASCII"));
}

absl::StatusOr<nlohmann::json> Mounts(const ClaimDevices& claim) {
  nlohmann::json mounts = nlohmann::json::array();
  for (const CdiMount& m : claim.mounts) {
    if (absl::Status s = CheckMountPath("hostPath", m.host_path); !s.ok()) return s;
    if (absl::Status s = CheckMountPath("containerPath", m.container_path); !s.ok()) return s;
    nlohmann::json mount = {{"hostPath", m.host_path}, {"containerPath", m.container_path}};
    if (!m.options.empty()) mount["options"] = m.options;
    if (!m.type.empty()) mount["type"] = m.type;
    mounts.push_back(std::move(mount));
  }
  return mounts;
}

}  // namespace

std::string CdiDeviceId(absl::string_view claim_uid) {
  return absl::StrCat(kCdiKind, "=", claim_uid);
}

std::string CdiSpecFileName(absl::string_view claim_uid) {
  return absl::StrCat("neuron.aws.com-device_", claim_uid, ".json");
}

absl::StatusOr<nlohmann::json> BuildCdiSpec(const ClaimDevices& claim) {
  if (absl::Status s = CheckClaimUid(claim.claim_uid); !s.ok()) return s;
  if (claim.devices.empty()) return absl::InvalidArgumentError("a claim without devices");
  const auto negative = [](int v) { return v < 0; };
  if (std::any_of(claim.devices.begin(), claim.devices.end(), negative) ||
      std::any_of(claim.visible_cores.begin(), claim.visible_cores.end(), negative)) {
    return absl::InvalidArgumentError("negative device or core index");
  }
  nlohmann::json edits = {{"deviceNodes", DeviceNodes(claim)}};
  if (nlohmann::json env = Env(claim); !env.empty()) edits["env"] = std::move(env);
  absl::StatusOr<nlohmann::json> mounts = Mounts(claim);
  if (!mounts.ok()) return mounts.status();
  if (!mounts->empty()) edits["mounts"] = *std::move(mounts);
  return nlohmann::json{
      {"cdiVersion", kCdiVersion},
      {"kind", kCdiKind},
      {"devices", {{{"name", claim.claim_uid}, {"containerEdits", std::move(edits)}}}},
  };
}

absl::StatusOr<std::string> WriteCdiSpec(const std::string& cdi_dir, const ClaimDevices& claim) {
  absl::StatusOr<nlohmann::json> spec = BuildCdiSpec(claim);
  if (!spec.ok()) return spec.status();
  const std::string path =
      (std::filesystem::path(cdi_dir) / CdiSpecFileName(claim.claim_uid)).string();
  // The UID and mount paths were checked; replace keeps dump() from ever throwing (options and
  // environment are ours).
  const std::string text = spec->dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  if (absl::Status s = WriteFileAtomically(path, text + "\n"); !s.ok()) return s;
  return CdiDeviceId(claim.claim_uid);
}

absl::Status RemoveCdiSpec(const std::string& cdi_dir, absl::string_view claim_uid) {
  if (absl::Status s = CheckClaimUid(claim_uid); !s.ok()) return s;
  return RemoveFileDurably((std::filesystem::path(cdi_dir) / CdiSpecFileName(claim_uid)).string());
}

std::string FormatCoreRanges(std::vector<int> cores) {
  std::sort(cores.begin(), cores.end());
  cores.erase(std::unique(cores.begin(), cores.end()), cores.end());
  std::string out;
  for (size_t i = 0; i < cores.size();) {
    size_t j = i;
    while (j + 1 < cores.size() && cores[j + 1] == cores[j] + 1) ++j;
    absl::StrAppend(&out, out.empty() ? "" : ",", cores[i]);
    if (j > i) absl::StrAppend(&out, "-", cores[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace neuron::dra
