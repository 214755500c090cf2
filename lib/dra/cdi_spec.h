// The CDI spec (github.com/cncf-tags/container-device-interface SPEC.md) that hands one
// prepared claim's Neuron devices to its containers. The kubelet passes the CDI device ID we
// return from NodePrepareResources to the runtime (containerd, CRI-O), which applies the edits
// found in the spec files of /etc/cdi and /var/run/cdi.
//
// One spec file and one CDI device per claim: kind "neuron.aws.com/device", device name = the
// claim UID, edits = the claim's /dev/neuronN nodes, its environment and its mounts (a compile
// cache's directory, cache_mounts.h).
#ifndef NEURON_LIB_DRA_CDI_SPEC_H_
#define NEURON_LIB_DRA_CDI_SPEC_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace neuron::dra {

// 0.6.0: hostPath on device nodes needs >= 0.5.0. CDI libraries accept only versions they know:
// runtimes vendoring CDI v0.5.x (containerd 1.7 before its 2024 CDI update) refuse 0.6.0.
inline constexpr char kCdiVersion[] = "0.6.0";
inline constexpr char kCdiKind[] = "neuron.aws.com/device";

// containerEdits.mounts[]: a host path mounted into the containers.
struct CdiMount {
  std::string host_path;
  std::string container_path;
  std::vector<std::string> options;  // e.g. {"rbind", "rw"}
  std::string type;                  // "" = left out (the runtime's default, a bind mount)
  bool operator==(const CdiMount&) const = default;
};

struct ClaimDevices {
  std::string claim_uid;
  std::vector<int> devices;  // Neuron device indices: /dev/neuron<N>
  // NEURON_RT_VISIBLE_CORES, as the container numbers them (the caller's choice); empty = unset.
  std::vector<int> visible_cores;
  std::optional<int> logical_nc_config;  // NEURON_LOGICAL_NC_CONFIG; nullopt = unset
  // Host node behind every /dev/neuronN; "" = the same path. Emulated nodes use "/dev/null".
  std::string device_host_path;
  // Further variables, in order (an UltraServer claim's five, ultraserver_placement.h).
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<CdiMount> mounts;
};

// "neuron.aws.com/device=<claim uid>": what NodePrepareResources reports for the claim.
std::string CdiDeviceId(absl::string_view claim_uid);
// "neuron.aws.com-device_<claim uid>.json", the file's name in the CDI directory.
std::string CdiSpecFileName(absl::string_view claim_uid);
// InvalidArgument when the UID cannot be a CDI device name, there are no devices, an index is
// negative, or a mount's paths are not absolute printable ASCII.
absl::StatusOr<nlohmann::json> BuildCdiSpec(const ClaimDevices& claim);

// Writes the claim's spec into `cdi_dir` atomically (a runtime never reads half a file) and
// returns its CDI device ID. Rewriting an existing claim replaces its file.
absl::StatusOr<std::string> WriteCdiSpec(const std::string& cdi_dir, const ClaimDevices& claim);
// Removes the claim's spec; one that is already gone is fine (unprepare is retried).
absl::Status RemoveCdiSpec(const std::string& cdi_dir, absl::string_view claim_uid);

// {0,1,2,3,6} -> "0-3,6" (NEURON_RT_VISIBLE_CORES accepts ranges since Neuron 2.16.18).
std::string FormatCoreRanges(std::vector<int> cores);

}  // namespace neuron::dra

#endif  // NEURON_LIB_DRA_CDI_SPEC_H_
