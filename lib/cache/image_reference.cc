// File: lib/cache/image_reference.cc
// Follows the grammar of github.com/distribution/reference (the one docker and containerd use).
#include "lib/cache/image_reference.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "lib/base/status_macros.h"
#include "lib/cache/digest.h"

namespace neuron::cache {
namespace {

constexpr size_t kMaxNameLength = 255;
constexpr size_t kMaxTagLength = 128;

bool IsLowerAlnum(char c) { return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'z'); }

// One path component: [a-z0-9]+ ((\.|_|__|-+)[a-z0-9]+)*
bool IsValidComponent(absl::string_view c) {
  if (c.empty() || !IsLowerAlnum(c.front()) || !IsLowerAlnum(c.back())) return false;
  for (size_t i = 0; i < c.size(); ++i) {
    if (IsLowerAlnum(c[i])) continue;
    if (c[i] == '-') continue;  // runs of '-' are allowed
    if (c[i] == '.' || c[i] == '_') {
      const bool double_underscore = c[i] == '_' && c[i + 1] == '_';
      const size_t next = i + (double_underscore ? 2 : 1);
      if (!IsLowerAlnum(c[next])) return false;  // ends with alnum, so next < size
      i = next - 1;
      continue;
    }
    return false;
  }
  return true;
}

bool IsValidTag(absl::string_view t) {
  if (t.empty() || t.size() > kMaxTagLength) return false;
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    const bool word = absl::ascii_isalnum(c) || c == '_';
    if (!word && (i == 0 || (c != '.' && c != '-'))) return false;
  }
  return true;
}

// host[:port] where host is a DNS name or IPv4 address (IPv6 literals are not supported).
bool IsValidRegistry(absl::string_view r) {
  std::vector<absl::string_view> parts = absl::StrSplit(r, absl::MaxSplits(':', 1));
  if (parts.size() == 2) {
    int port = 0;
    if (!absl::SimpleAtoi(parts[1], &port) || port <= 0 || port > 65535) return false;
  }
  const absl::string_view host = parts[0];
  if (host.empty() || host.size() > 253) return false;  // DNS's limit
  for (absl::string_view label : absl::StrSplit(host, '.')) {
    if (label.empty() || label.front() == '-' || label.back() == '-') return false;
    for (char c : label) {
      if (!absl::ascii_isalnum(c) && c != '-') return false;
    }
  }
  return true;
}

// A first component names a registry when it looks like a host (has '.' or ':') or is localhost.
bool LooksLikeRegistry(absl::string_view first) {
  return first.find_first_of(".:") != absl::string_view::npos || first == "localhost";
}

absl::Status Invalid(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("image reference \"", text, "\": ", why));
}

absl::Status ParseName(absl::string_view text, absl::string_view name, ImageReference& ref) {
  std::vector<absl::string_view> parts = absl::StrSplit(name, '/');
  if (parts.size() > 1 && LooksLikeRegistry(parts[0])) {
    if (!IsValidRegistry(parts[0])) return Invalid(text, "bad registry host");
    ref.registry = std::string(parts[0]);
    parts.erase(parts.begin());
  } else {
    ref.registry = "docker.io";
  }
  for (absl::string_view c : parts) {
    if (!IsValidComponent(c)) {
      return Invalid(text, absl::StrCat("bad repository component \"", c,
                                        "\" (lowercase letters, digits and . _ - only)"));
    }
  }
  ref.repository = absl::StrJoin(parts, "/");
  if (ref.registry == "docker.io" && parts.size() == 1) {
    ref.repository = "library/" + ref.repository;  // docker's official images
  }
  if (ref.repository.size() > kMaxNameLength) return Invalid(text, "repository name too long");
  return absl::OkStatus();
}

}  // namespace

std::string ImageReference::ToString() const {
  std::string out = absl::StrCat(registry, "/", repository);
  if (!tag.empty()) absl::StrAppend(&out, ":", tag);
  if (!digest.empty()) absl::StrAppend(&out, "@", digest);
  return out;
}

absl::StatusOr<ImageReference> ParseImageReference(std::string_view text_in) {
  const absl::string_view text(text_in.data(), text_in.size());
  if (text.empty()) return Invalid(text, "empty");
  if (text.size() > 1024) return Invalid(text.substr(0, 64), "longer than 1024 characters");
  ImageReference ref;
  absl::string_view name = text;
  if (const size_t at = name.find('@'); at != absl::string_view::npos) {
    ref.digest = std::string(name.substr(at + 1));
    if (!IsValidDigest(ref.digest)) return Invalid(text, "digest is not sha256:<64 lowercase hex>");
    name = name.substr(0, at);
  }
  const size_t slash = name.rfind('/');
  const size_t colon = name.rfind(':');
  if (colon != absl::string_view::npos && (slash == absl::string_view::npos || colon > slash)) {
    ref.tag = std::string(name.substr(colon + 1));
    if (!IsValidTag(ref.tag)) return Invalid(text, "bad tag");
    name = name.substr(0, colon);
  }
  if (name.empty()) return Invalid(text, "no repository");
  NEURON_RETURN_IF_ERROR(ParseName(text, name, ref));
  if (ref.tag.empty() && ref.digest.empty()) ref.tag = "latest";
  return ref;
}

std::string RegistryEndpoint(std::string_view registry) {
  if (registry == "docker.io" || registry == "index.docker.io") return "registry-1.docker.io";
  return std::string(registry);
}

}  // namespace neuron::cache
