// File: lib/dra/unimplemented_preparer.h
// Stand-in ClaimPreparer until real claim preparation (CDI spec + checkpoint) is wired in:
// every claim fails with a clear "not implemented" error, so a pod using a neuron.aws.com claim
// stays in ContainerCreating with that message instead of starting without its devices.
#pragma once

#include "lib/dra/claim_preparer.h"

namespace neuron::dra {

class UnimplementedPreparer final : public ClaimPreparer {
 public:
  PrepareResults Prepare(const std::vector<ClaimRef>& claims) override;
  // Nothing was ever prepared, so there is nothing to undo: every claim succeeds (the kubelet
  // must be able to delete pods whose claims never got prepared).
  UnprepareResults Unprepare(const std::vector<ClaimRef>& claims) override;
};

}  // namespace neuron::dra
