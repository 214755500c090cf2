// File: lib/ultraserver/emulation.cc
#include "lib/ultraserver/emulation.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "lib/ultraserver/identity.h"

namespace neuron::ultraserver {
namespace {

// FNV-1a, then splitmix64's finalizer: a stable 64-bit id from a name (not a secret, only
// distinct; without the finalizer "us-a" and "us-b" give ids that differ in a few digits).
uint64_t StableId(const std::string& s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h == 0 ? 1 : h;  // all zeros means "none" to the driver
}

std::string Hex16(uint64_t v) { return absl::StrFormat("%016x", v); }

}  // namespace

absl::StatusOr<EmulatedNode> ParseEmulatedNode(const std::string& flag) {
  std::vector<std::string> parts = absl::StrSplit(flag, ':');
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(
        absl::StrCat("--emulate-ultraserver=\"", flag, "\": ", why,
                     " (expected <name>:<node 0..3>[:<modes>], e.g. us-a:2 or us-a:0:1,2,3,4)"));
  };
  if (parts.size() < 2 || parts.size() > 3) return bad("wrong number of ':' parts");
  EmulatedNode n;
  n.name = parts[0];
  if (n.name.empty() || n.name.size() > 32 ||
      !std::all_of(n.name.begin(), n.name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-';
      })) {
    return bad("the name must be 1..32 characters of [0-9A-Za-z._-]");
  }
  if (parts[1].size() != 1 || parts[1][0] < '0' || parts[1][0] > '3') {
    return bad("the node must be 0, 1, 2 or 3");
  }
  n.node = parts[1][0] - '0';
  if (parts.size() == 3) {
    auto modes = ParseModes(parts[2]);
    if (!modes.ok()) return bad(std::string(modes.status().message()));
    if (modes->empty()) return bad("the mode list is empty");
    n.modes = *std::move(modes);
  }
  return n;
}

std::map<std::string, std::string> EmulatedClassAttributes(const EmulatedNode& node) {
  const int pair = node.node / 2;
  return {
      {kModesFile, absl::StrCat(absl::StrJoin(node.modes, ","), "\n")},
      {ServerIdFile(4), Hex16(StableId(absl::StrCat("x4/", node.name))) + "\n"},
      {NodeIdFile(4), absl::StrCat(node.node, "\n")},
      {ServerIdFile(2), Hex16(StableId(absl::StrCat("x2/", node.name, "/", pair))) + "\n"},
      {NodeIdFile(2), absl::StrCat(node.node % 2, "\n")},
  };
}

}  // namespace neuron::ultraserver
