// File: lib/operator/kube_version.h
// Kubernetes versions as the operator compares them: the API server's gitVersion (GET /version)
// and an image's tag, each reduced to vMAJOR.MINOR.PATCH; the upstream kube-scheduler image of
// a version; and the skew policy's rule for kube-scheduler (never newer than the API server).
// Pure: the reconciler fetches /version, children and status use these.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace neuron::op {

struct KubeVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;

  std::string ToString() const;  // "v1.32.13"
  auto operator<=>(const KubeVersion&) const = default;
};

// "v1.32.13", "1.32.13", and distribution builds: "v1.32.3+k3s1", "v1.32.3-eks-abc",
// "v1.35.5-eks-1-35-10" all read as their MAJOR.MINOR.PATCH. Anything else is nullopt.
std::optional<KubeVersion> ParseKubeVersion(std::string_view text);

// The version in an image's tag ("repo/kube-scheduler:v1.35.5-eks-1-35-10@sha256:..." ->
// 1.35.5); nullopt when it has no tag or the tag is not a version ("latest").
std::optional<KubeVersion> ImageTagVersion(std::string_view image);

// The upstream kube-scheduler of that version: registry.k8s.io/kube-scheduler:vMAJOR.MINOR.PATCH.
std::string KubeSchedulerImage(const KubeVersion& v);

// Kubernetes' version skew policy: kube-scheduler must not be newer than kube-apiserver (by
// minor version; patch releases of one minor are interchangeable).
bool SchedulerNewerThanApiServer(const KubeVersion& scheduler, const KubeVersion& apiserver);

}  // namespace neuron::op
