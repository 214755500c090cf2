// File: lib/csi/publish_request.h
// NodePublishVolume / NodeUnpublishVolume requests as the driver checks them, without gRPC
// types: what the kubelet may send us for an inline ephemeral volume, and what we refuse.
#pragma once

#include <map>
#include <string>

#include "absl/status/status.h"

namespace neuron::csi {

// volume_context keys the kubelet adds (podInfoOnMount: true on our CSIDriver object).
inline constexpr char kEphemeralKey[] = "csi.storage.k8s.io/ephemeral";
inline constexpr char kPodNameKey[] = "csi.storage.k8s.io/pod.name";
inline constexpr char kPodNamespaceKey[] = "csi.storage.k8s.io/pod.namespace";
inline constexpr char kPodUidKey[] = "csi.storage.k8s.io/pod.uid";

struct PublishRequest {
  std::string volume_id;
  std::string target_path;
  bool block = false;      // volume_capability.access_type is block
  bool has_mount = false;  // volume_capability.access_type is mount
  bool readonly = false;
  std::map<std::string, std::string> context;  // volume_context
};

// [A-Za-z0-9._-], 1..128 characters, not starting with '.': the id names files in our state
// directory. The kubelet's inline ids are "csi-<sha256 hex>".
absl::Status ValidateVolumeId(const std::string& id);
// Absolute, already normal (no ".", "..", "//" or trailing '/'), strictly below
// <kubelet_dir>/pods/: we create and remove this directory, so nothing else may be named.
absl::Status ValidateTargetPath(const std::string& target, const std::string& kubelet_dir);
// All of the above plus: a mount capability, not read-only, an inline ephemeral volume.
absl::Status ValidatePublish(const PublishRequest& req, const std::string& kubelet_dir);

// "namespace/name" of the pod from the context, or "-" when the kubelet sent no pod info.
std::string PodOf(const std::map<std::string, std::string>& context);

}  // namespace neuron::csi
