// File: lib/cache/digest.cc
#include "lib/cache/digest.h"

#include "absl/strings/ascii.h"
#include "lib/base/sha256.h"

namespace neuron::cache {

std::string Sha256Digest(std::string_view data) { return "sha256:" + Sha256Hex(data); }

bool IsValidDigest(std::string_view digest) {
  constexpr std::string_view kPrefix = "sha256:";
  if (digest.substr(0, kPrefix.size()) != kPrefix || digest.size() != kPrefix.size() + 64) {
    return false;
  }
  for (char c : digest.substr(kPrefix.size())) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c)) && (c < 'a' || c > 'f')) return false;
  }
  return true;
}

}  // namespace neuron::cache
