// File: tests/fuzz/dra_claim_fuzz.cc
// A ResourceClaim object as the API server returns it (its results and opaque configs are
// written by users and schedulers) through ReadClaimAllocation: an allocation or a
// FailedPrecondition / InvalidArgument, never a crash. An accepted allocation holds only
// devices whose names parse back to the same reference.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "lib/base/json_access.h"
#include "lib/dra/claim_allocation.h"
#include "nlohmann/json.hpp"

namespace {

void FuzzOne(std::string_view in) {
  const nlohmann::json claim = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (claim.is_discarded()) return;
  const std::string uid = neuron::StringAt(claim, {"metadata", "uid"}, "u");
  absl::StatusOr<neuron::dra::ClaimAllocation> a =
      neuron::dra::ReadClaimAllocation(claim, uid, "neuron.aws.com", "node-a");
  if (!a.ok()) {
    const absl::StatusCode code = a.status().code();
    if (code != absl::StatusCode::kInvalidArgument &&
        code != absl::StatusCode::kFailedPrecondition) {
      std::abort();
    }
    return;
  }
  if (a->devices.empty()) std::abort();
  for (const neuron::dra::AllocatedDevice& d : a->devices) {
    absl::StatusOr<neuron::dra::DeviceRef> ref = neuron::dra::ParseDeviceName(d.name);
    if (!ref.ok() || !(*ref == d.ref)) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzOne(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
