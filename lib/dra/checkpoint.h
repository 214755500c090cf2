// The DRA plugin's record of the claims it has prepared, kept on disk so that a restarted
// plugin answers a repeated NodePrepareResources with the same devices and CDI IDs, and still
// knows what to clean up in NodeUnprepareResources.
//
// File: one JSON object {"kind": "NeuronDraCheckpoint", "version": 1, "checksum": "<sha256>",
// "claims": {"<claim uid>": {"namespace", "name", "state": "preparing"|"prepared",
// "devices": [{"requests", "pool", "device", "cdiDeviceIds"}], optional "compileCache": {"kind",
// "namespace", "name", "mountPath"}}}}. The checksum covers the
// canonical (sorted-key, compact) text of the object without "checksum", so a torn or edited
// file is detected instead of trusted. Written atomically (atomic_file.h). compileCache came
// later within version 1: older files lack it, and older readers pass over it.
#ifndef NEURON_LIB_DRA_CHECKPOINT_H_
#define NEURON_LIB_DRA_CHECKPOINT_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/dra/claim_preparer.h"  // PreparedDevice: what the kubelet is told

namespace neuron::dra {

inline constexpr int kCheckpointVersion = 1;

// "preparing" is written before any side effect (CDI file) so a crash mid-prepare leaves a
// trace to clean up; "prepared" once the reply can be given.
enum class ClaimState { kPreparing, kPrepared };

// The compile cache mounted for a claim (cache_mounts.h): unprepare releases it, also after a
// restart.
struct PreparedCache {
  std::string kind;            // NeuronCache or ClusterNeuronCache
  std::string namespace_name;  // "" for a ClusterNeuronCache
  std::string name;
  std::string mount_path;
  bool operator==(const PreparedCache&) const = default;
};

struct PreparedClaim {
  std::string namespace_name;
  std::string name;
  ClaimState state = ClaimState::kPreparing;
  std::vector<PreparedDevice> devices;
  std::optional<PreparedCache> cache;  // written with "preparing", before the cache is mounted
  bool operator==(const PreparedClaim&) const = default;
};

struct Checkpoint {
  std::map<std::string, PreparedClaim> claims;  // by claim UID
  bool operator==(const Checkpoint&) const = default;
};

// InvalidArgument when a string is not valid UTF-8 (it could not be read back).
absl::StatusOr<std::string> SerializeCheckpoint(const Checkpoint& checkpoint);
// DataLoss for anything but a checkpoint we wrote: not JSON, truncated, wrong checksum, fields
// missing or of the wrong type; FailedPrecondition for another version. Never throws.
absl::StatusOr<Checkpoint> ParseCheckpoint(std::string_view text);

absl::Status SaveCheckpoint(const std::string& path, const Checkpoint& checkpoint);
// A missing file is an empty checkpoint (first start); errors name the path.
absl::StatusOr<Checkpoint> LoadCheckpoint(const std::string& path);

}  // namespace neuron::dra

#endif  // NEURON_LIB_DRA_CHECKPOINT_H_
