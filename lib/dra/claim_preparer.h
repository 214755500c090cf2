// File: lib/dra/claim_preparer.h
// The one seam between the kubelet's DRA gRPC calls (v1 and v1beta1, see dra_service.h) and
// whatever prepares Neuron devices for a ResourceClaim (CDI specs, checkpoint). The gRPC side
// only translates; it never decides anything about devices.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace neuron::dra {

// A ResourceClaim as the kubelet names it in NodePrepareResources / NodeUnprepareResources.
struct ClaimRef {
  std::string ns;
  std::string name;
  std::string uid;
};

// One device the runtime must make available for a prepared claim.
struct PreparedDevice {
  std::vector<std::string> request_names;  // empty = serves every request of the claim
  std::string pool;
  std::string device;
  std::vector<std::string> cdi_device_ids;  // fully qualified: vendor/class=name
  bool operator==(const PreparedDevice&) const = default;
};

// Results keyed by claim UID. A claim missing from a result map is reported to the kubelet as
// failed (it then retries), so an implementation cannot drop one silently.
using PrepareResults = std::map<std::string, absl::StatusOr<std::vector<PreparedDevice>>>;
using UnprepareResults = std::map<std::string, absl::Status>;

class ClaimPreparer {
 public:
  virtual ~ClaimPreparer() = default;
  // Called from gRPC threads, possibly concurrently. Both must be idempotent: the kubelet
  // repeats calls after its own restart or a timeout.
  virtual PrepareResults Prepare(const std::vector<ClaimRef>& claims) = 0;
  virtual UnprepareResults Unprepare(const std::vector<ClaimRef>& claims) = 0;
};

}  // namespace neuron::dra
