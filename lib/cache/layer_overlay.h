// Filesystem steps of applying one layer on top of earlier ones, beyond what libarchive writes:
// OCI whiteouts, opaque directories, type changes, and refusing to work through symlinks.
// Every path is a normalised layer path relative to the current working directory, which the
// extractor has made the destination root (see layer_extractor.cc).
#pragma once

#include <string>
#include <string_view>
#include <unordered_set>

#include "absl/status/status.h"

namespace neuron::cache {

// The paths the current layer created, with every ancestor directory (implicit ones too), so an
// opaque marker spares them.
class LayerPaths {
 public:
  void Add(std::string_view path);
  bool Contains(const std::string& path) const { return paths_.count(path) > 0; }

 private:
  std::unordered_set<std::string> paths_;
};

// InvalidArgument when a directory on the way to `path` (not `path` itself) is a symlink or not
// a directory; missing directories are fine (they will be created).
absl::Status CheckNoSymlinkParents(std::string_view path);
// Before an entry is written: an earlier layer's directory where a non-directory goes is
// removed (recursively); an earlier non-directory where a directory goes is unlinked.
absl::Status ClearConflicting(const std::string& path, bool entry_is_dir);
// ".wh.<name>": removes `path` left by earlier layers (not one this layer created).
absl::Status ApplyWhiteout(const std::string& path, const LayerPaths& created);
// ".wh..wh..opq": empties `dir` of everything this layer did not create.
absl::Status ApplyOpaque(const std::string& dir, const LayerPaths& created);

}  // namespace neuron::cache
