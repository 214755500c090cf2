// Safe extraction of one OCI image layer (a tar archive, optionally compressed) into a
// directory, on top of the layers extracted there before. Hostile layers are rejected before
// they change anything outside the destination; the caller discards the destination on error.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "lib/cache/layer_path.h"  // NormalizeLayerPath

namespace neuron::cache {

struct ExtractLimits {
  uint64_t max_total_bytes = 8ull << 30;
  uint64_t max_file_bytes = 4ull << 30;
  uint64_t max_entries = 1'000'000;
};

struct ExtractStats {
  uint64_t bytes = 0, files = 0, dirs = 0, symlinks = 0, hardlinks = 0, whiteouts = 0, entries = 0;
};

// Extracts the layer at `archive_path` (tar, ustar, pax or GNU; gzip, zstd, xz, bzip2, lz4 or
// none, detected) into `dest_root`, an existing directory. `stats` accumulates across the
// layers of an image and `limits` apply to those totals. `cancelled`, when set, is polled
// between entries and data blocks, from a thread of the extractor's own.
//
// InvalidArgument naming the entry and the reason for: absolute or ".." paths; symlinks whose
// target is absolute or leaves the root; hardlinks to an invalid path; devices, FIFOs, sockets;
// a file whose declared size exceeds max_file_bytes or takes the total over max_total_bytes
// (decided from the header, before any data is written); more than max_entries entries;
// anything written through a symlink; an archive that is not a valid tar stream.
// Cancelled when `cancelled` returned true; ResourceExhausted for a full disk; Unavailable for
// other I/O errors. On error the destination holds a partial layer.
//
// Whiteouts follow the OCI image spec: ".wh.<name>" removes <name> of earlier layers and is not
// created; ".wh..wh..opq" empties its directory of what earlier layers put there. Owners,
// setuid/setgid/sticky bits, xattrs, ACLs and file flags are not restored; files keep their
// other mode bits and directories are 0755, so every reader can traverse them.
absl::Status ExtractLayer(const std::string& archive_path, const std::string& dest_root,
                          const ExtractLimits& limits, ExtractStats& stats,
                          const std::function<bool()>& cancelled = {});

}  // namespace neuron::cache
