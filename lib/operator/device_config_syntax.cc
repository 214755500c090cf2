// File: lib/operator/device_config_syntax.cc
// Hand-written scanners rather than std::regex: these run on untrusted input (the fuzz target),
// and libstdc++'s regex recurses once per character.
#include "lib/operator/device_config_syntax.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"

namespace neuron::op {
namespace {

bool IsLowerAlnum(char c) { return absl::ascii_islower(c) || absl::ascii_isdigit(c); }

// [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])? of at most 63.
bool IsLabelName(absl::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!absl::ascii_isalnum(s.front()) || !absl::ascii_isalnum(s.back())) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])? with no length limit of its own.
bool IsDns1123Part(absl::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

}  // namespace

bool IsLabelKey(absl::string_view key) {
  const size_t slash = key.find('/');
  if (slash == absl::string_view::npos) return IsLabelName(key);
  return IsDns1123Subdomain(key.substr(0, slash)) && IsLabelName(key.substr(slash + 1));
}

bool IsLabelValue(absl::string_view value) { return value.empty() || IsLabelName(value); }

bool IsDns1123Subdomain(absl::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  while (true) {
    const size_t dot = s.find('.');
    if (!IsDns1123Part(s.substr(0, dot))) return false;
    if (dot == absl::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

bool IsDns1035Label(absl::string_view s) {
  return s.size() <= 63 && IsDns1123Part(s) && absl::ascii_islower(s.front());
}

bool IsImageReference(absl::string_view image) {
  if (image.empty()) return false;
  for (char c : image) {
    const auto u = static_cast<unsigned char>(c);
    if (absl::ascii_isspace(u) || u < 0x20 || u == 0x7f) return false;
  }
  return true;
}

bool IsKubeletRootDir(absl::string_view path) {
  constexpr size_t kMaxPath = 4096;  // PATH_MAX
  if (path.size() < 2 || path.size() > kMaxPath || path.front() != '/') return false;
  if (!IsImageReference(path)) return false;  // whitespace or control characters
  for (absl::string_view part : absl::StrSplit(path.substr(1), '/')) {
    if (part == "." || part == "..") return false;
  }
  return true;
}

bool HasImageTag(absl::string_view image) {
  if (absl::StrContains(image, "@")) return false;
  const size_t colon = image.rfind(':');
  const size_t slash = image.rfind('/');
  // A colon before the last slash is a registry port (host:5000/repo), not a tag.
  return colon != absl::string_view::npos && colon + 1 < image.size() &&
         (slash == absl::string_view::npos || colon > slash);
}

}  // namespace neuron::op
