// File: lib/csi/publish_request.cc
#include "lib/csi/publish_request.h"

#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace neuron::csi {

namespace fs = std::filesystem;

absl::Status ValidateVolumeId(const std::string& id) {
  bool ok = !id.empty() && id.size() <= 128 && id[0] != '.';
  for (char c : id) ok = ok && (absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '-');
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat("volume_id \"", id,
                     "\" must be 1-128 characters of [A-Za-z0-9._-], not starting with '.'"));
  }
  return absl::OkStatus();
}

absl::Status ValidateTargetPath(const std::string& target, const std::string& kubelet_dir) {
  const std::string pods = (fs::path(kubelet_dir).lexically_normal() / "pods").string() + "/";
  const fs::path p(target);
  bool ok = p.is_absolute() && p.lexically_normal().string() == target && target.back() != '/' &&
            absl::StartsWith(target, pods) && target.size() > pods.size() &&
            target.find('\0') == std::string::npos;
  for (const fs::path& part : p) ok = ok && part != "..";
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "target_path \"", target, "\" must be an absolute, normalised path under ", pods));
  }
  return absl::OkStatus();
}

absl::Status ValidatePublish(const PublishRequest& req, const std::string& kubelet_dir) {
  if (absl::Status s = ValidateVolumeId(req.volume_id); !s.ok()) return s;
  if (absl::Status s = ValidateTargetPath(req.target_path, kubelet_dir); !s.ok()) return s;
  if (req.block) {
    return absl::InvalidArgumentError(
        "block access is not supported: compile-cache volumes are filesystems (mount access type)");
  }
  if (!req.has_mount) {
    return absl::InvalidArgumentError("volume_capability with mount access type is required");
  }
  if (req.readonly) {
    return absl::InvalidArgumentError(
        "read-only publishing is not supported (the Neuron compiler writes new graphs into the "
        "cache); set readOnly on the container's volumeMount instead");
  }
  auto eph = req.context.find(kEphemeralKey);
  if (eph == req.context.end() || eph->second != "true") {
    return absl::InvalidArgumentError(absl::StrCat(
        "only inline ephemeral volumes are supported (volume_context ", kEphemeralKey,
        "=\"true\"): use a csi volume in the pod spec, not a PersistentVolume, and set "
        "podInfoOnMount: true on the CSIDriver object"));
  }
  return absl::OkStatus();
}

std::string PodOf(const std::map<std::string, std::string>& context) {
  auto ns = context.find(kPodNamespaceKey);
  auto name = context.find(kPodNameKey);
  if (ns == context.end() || name == context.end()) return "-";
  return absl::StrCat(ns->second, "/", name->second);
}

}  // namespace neuron::csi
