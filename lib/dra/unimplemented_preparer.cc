// File: lib/dra/unimplemented_preparer.cc
#include "lib/dra/unimplemented_preparer.h"

#include "absl/strings/str_cat.h"

namespace neuron::dra {

PrepareResults UnimplementedPreparer::Prepare(const std::vector<ClaimRef>& claims) {
  PrepareResults out;
  for (const ClaimRef& c : claims) {
    out.emplace(c.uid, absl::UnimplementedError(absl::StrCat(
                           "neuron.aws.com: preparing ResourceClaim ", c.ns, "/", c.name,
                           " is not implemented yet in this build (DRA gRPC only)")));
  }
  return out;
}

UnprepareResults UnimplementedPreparer::Unprepare(const std::vector<ClaimRef>& claims) {
  UnprepareResults out;
  for (const ClaimRef& c : claims) out.emplace(c.uid, absl::OkStatus());
  return out;
}

}  // namespace neuron::dra
