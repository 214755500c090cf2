// Pure checks on the names inside an image layer (tar entry names, link targets, OCI
// whiteouts), done before any path is built from them. No I/O.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace neuron::cache {

inline constexpr size_t kMaxLayerPathLength = 4095;  // PATH_MAX - 1
inline constexpr size_t kMaxLayerNameLength = 255;   // NAME_MAX

// Normalises a tar entry name: "./a//b/" -> "a/b"; a name that is the root itself ("./", ".")
// gives ".". InvalidArgument for an empty name, an absolute path, a ".." component, a NUL byte,
// a name over kMaxLayerPathLength or a component over kMaxLayerNameLength.
absl::StatusOr<std::string> NormalizeLayerPath(std::string_view name);

// The directory holding a normalised path ("a/b" -> "a", "a" -> ".").
std::string_view LayerParent(std::string_view normalized);

// OK when a symlink at `link_path` (normalised) pointing to `target` stays inside the root:
// the target is relative and, resolved lexically from the link's directory, never climbs above
// the root. InvalidArgument saying why otherwise.
absl::Status CheckSymlinkTarget(std::string_view link_path, std::string_view target);

// The target as written to disk: lexically normalised ("y/.." -> ".", "./a//b" -> "a/b"), so
// ".." only leads it. A ".." after a name would be resolved by the kernel after following that
// name, which may be a symlink itself: "d/x" -> "y/.." with "d/y" -> ".." leaves the root
// although each link passes CheckSymlinkTarget. Call after CheckSymlinkTarget.
std::string CanonicalSymlinkTarget(std::string_view target);

// OCI whiteouts: ".wh.<name>" hides <name> of earlier layers; ".wh..wh..opq" hides everything
// earlier layers put in its directory; other ".wh..wh." names are AUFS bookkeeping.
enum class WhiteoutKind { kNone, kRemove, kOpaque, kAufsMeta };
struct Whiteout {
  WhiteoutKind kind = WhiteoutKind::kNone;
  std::string target;  // kRemove: the path hidden; kOpaque: the directory emptied
};
// Classifies a normalised path. InvalidArgument for a ".wh." name hiding nothing (".wh.").
absl::StatusOr<Whiteout> ClassifyWhiteout(std::string_view normalized);

}  // namespace neuron::cache
