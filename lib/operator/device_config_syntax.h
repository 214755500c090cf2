// File: lib/operator/device_config_syntax.h
// The name syntaxes a DeviceConfig's fields must follow, checked as kube-apiserver checks them
// (apimachinery validation: IsQualifiedName, IsValidLabelValue, IsDNS1123Subdomain,
// IsDNS1035Label), plus the little the operator needs of an image reference.
#pragma once

#include "absl/strings/string_view.h"

namespace neuron::op {

// A label key: [prefix/]name, the prefix a DNS-1123 subdomain, the name at most 63 of
// [A-Za-z0-9-_.] beginning and ending alphanumeric.
bool IsLabelKey(absl::string_view key);
// A label value: empty, or a name as in a label key.
bool IsLabelValue(absl::string_view value);
// At most 253 of [a-z0-9-.], dot-separated parts beginning and ending alphanumeric.
bool IsDns1123Subdomain(absl::string_view s);
// At most 63 of [a-z0-9-], beginning with a letter and ending alphanumeric (Service names).
bool IsDns1035Label(absl::string_view s);
// Non-empty, no whitespace or control characters (a pod would never pull it).
bool IsImageReference(absl::string_view image);
// An absolute directory other than "/", at most 4096 characters, with no "." or ".." component
// and no whitespace or control characters: a hostPath the kubelet's sockets live under.
bool IsKubeletRootDir(absl::string_view path);
// The reference ends in a tag (repo:tag), not a digest and not a bare repository: KMM appends
// "-$KERNEL_VERSION" to the driver image, which only works on a tag.
bool HasImageTag(absl::string_view image);

}  // namespace neuron::op
