// File: lib/operator/kube_version.cc
#include "lib/operator/kube_version.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace neuron::op {
namespace {

// The leading digits of `text` (at most 9, so the value fits) as a number, consumed from it;
// nullopt when there are none.
std::optional<int> TakeNumber(std::string_view& text) {
  size_t n = 0;
  int value = 0;
  for (; n < text.size() && n < 9 && text[n] >= '0' && text[n] <= '9'; ++n) {
    value = value * 10 + (text[n] - '0');
  }
  if (n == 0) return std::nullopt;
  text.remove_prefix(n);
  return value;
}

bool TakeChar(std::string_view& text, char c) {
  if (text.empty() || text.front() != c) return false;
  text.remove_prefix(1);
  return true;
}

}  // namespace

std::string KubeVersion::ToString() const {
  return absl::StrCat("v", major, ".", minor, ".", patch);
}

std::optional<KubeVersion> ParseKubeVersion(std::string_view text) {
  (void)TakeChar(text, 'v');
  KubeVersion v;
  const std::optional<int> major = TakeNumber(text);
  if (!major || !TakeChar(text, '.')) return std::nullopt;
  const std::optional<int> minor = TakeNumber(text);
  if (!minor || !TakeChar(text, '.')) return std::nullopt;
  const std::optional<int> patch = TakeNumber(text);
  if (!patch) return std::nullopt;
  // What follows is a pre-release ("-rc.1", "-eks-abc") or build ("+k3s1") suffix, or nothing.
  if (!text.empty() && text.front() != '-' && text.front() != '+') return std::nullopt;
  v.major = *major;
  v.minor = *minor;
  v.patch = *patch;
  return v;
}

std::optional<KubeVersion> ImageTagVersion(std::string_view image) {
  image = image.substr(0, image.find('@'));  // a digest is not a tag
  const size_t slash = image.rfind('/');
  const size_t colon = image.rfind(':');
  // A colon before the last slash is a registry port (host:5000/repo), not a tag.
  if (colon == std::string_view::npos || (slash != std::string_view::npos && colon < slash)) {
    return std::nullopt;
  }
  return ParseKubeVersion(image.substr(colon + 1));
}

std::string KubeSchedulerImage(const KubeVersion& v) {
  return absl::StrCat("registry.k8s.io/kube-scheduler:", v.ToString());
}

bool SchedulerNewerThanApiServer(const KubeVersion& scheduler, const KubeVersion& apiserver) {
  return std::make_pair(scheduler.major, scheduler.minor) >
         std::make_pair(apiserver.major, apiserver.minor);
}

}  // namespace neuron::op
