// The ClaimPreparer of the Neuron DRA driver: NodePrepareResources turns a claim's allocation
// (claim_allocation.h) into one CDI spec file (cdi_spec.h) whose device the kubelet hands to
// the runtime; NodeUnprepareResources removes it. State survives restarts in a checkpoint
// (checkpoint.h):
//   prepare:   already "prepared" -> the recorded answer, no API call (the kubelet repeats calls);
//              else read the claim, check it against the node and against the other prepared
//              claims (a device is never handed out twice), record "preparing", write the CDI
//              spec, record "prepared", answer.
// The UltraServer node device (neuronnode) hands out every device of the node: it overlaps every
// device and partition, so a claim on it and a claim on any of them are never prepared together
// (the scheduler keeps them apart itself only with partitionable counters, resource_slice.h; the
// later one waits here with an Unavailable error the kubelet retries). Its UltraServerConfig
// adds the runtime's five variables (ultraserver_placement.h).
// A NeuronConfig naming a compileCache (neuron_config.h) gets a host directory from CacheMounts
// once the device checks pass (the cache recorded with "preparing" first), bind-mounted
// read-write through the CDI spec. Without a CacheMounts such a claim fails with a message saying
// compile caches are not enabled (and a recorded cache is only logged at unprepare, so that the
// pod can finish).
//   unprepare: remove the CDI spec (by claim UID, so also for claims a lost checkpoint forgot),
//              release the claim's compile cache, drop the record. Unknown claims succeed: the
//              kubelet must be able to finish.
// Any failure after the checks (cache, CDI file, checkpoint) undoes the claim's steps.
// A crash between the steps leaves a "preparing" record and perhaps a CDI file; the kubelet's
// retry of the same call repairs both. A checkpoint that cannot be read is moved aside (kept for
// the admin, named in the log) and the driver starts empty: claims are re-prepared from the API.
#ifndef NEURON_LIB_DRA_NEURON_PREPARER_H_
#define NEURON_LIB_DRA_NEURON_PREPARER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "lib/dra/cache_mounts.h"
#include "lib/dra/checkpoint.h"
#include "lib/dra/claim_allocation.h"
#include "lib/dra/claim_preparer.h"
#include "lib/dra/ultraserver_placement.h"
#include "nlohmann/json.hpp"

namespace neuron::dra {

// Reads the ResourceClaim named by the kubelet (api_claim_source.h reads it from the API
// server; tests supply objects).
class ClaimSource {
 public:
  virtual ~ClaimSource() = default;
  virtual absl::StatusOr<nlohmann::json> Get(const ClaimRef& claim) = 0;
};

// What the preparer needs to know of the node now (from the latest inventory scan).
struct NodeFacts {
  int devices = 0;                    // /dev/neuron0 .. devices-1
  int physical_cores_per_device = 0;  // as the driver reports (before LNC)
  int node_lnc = 1;                   // the LNC the node's slices were published with
  bool lnc2_supported = false;        // LNC 2 is possible on this chip (Trainium2+)
  UltraServerFacts ultraserver;       // the node's UltraServer identity, if any
};

struct NeuronPreparerOptions {
  std::string driver_name = "neuron.aws.com";
  std::string node_name;        // = our pool's name
  std::string cdi_dir;          // where CDI specs go (CDI_ROOT)
  std::string checkpoint_path;  // <state dir>/checkpoint.json
  // Host node behind each /dev/neuronN in the container; "" = itself. Emulation: /dev/null.
  std::string device_host_path;
  std::function<absl::StatusOr<NodeFacts>()> node_facts;
  // Finds the Node holding node id 0 of an UltraServer set (ultraserver_peers.h); may be empty.
  Rank0Lookup rank0_host;
  // Compile caches for claims that name one; nullptr = not enabled. Not owned; outlives us.
  CacheMounts* cache_mounts = nullptr;
};

struct ClaimPlan;  // what a claim gets, decided before any side effect (neuron_preparer.cc)

class NeuronPreparer final : public ClaimPreparer {
 public:
  // Loads the checkpoint. InvalidArgument for missing options; an unreadable directory is an
  // error, a corrupt checkpoint is not (see above).
  static absl::StatusOr<std::unique_ptr<NeuronPreparer>> Create(NeuronPreparerOptions options,
                                                                ClaimSource& source);

  PrepareResults Prepare(const std::vector<ClaimRef>& claims) override;
  UnprepareResults Unprepare(const std::vector<ClaimRef>& claims) override;

  // Claims recorded as prepared (by UID), for /inventory-style introspection and tests.
  std::vector<std::string> PreparedClaims() const;

 private:
  NeuronPreparer(NeuronPreparerOptions options, ClaimSource& source, Checkpoint checkpoint);

  absl::StatusOr<std::vector<PreparedDevice>> PrepareOne(const ClaimRef& claim)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads the claim's allocation and configs and checks them against the node and the other
  // claims: no side effect.
  absl::StatusOr<ClaimPlan> Plan(const ClaimRef& claim, const nlohmann::json& object) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records "preparing", mounts the cache, writes the CDI spec, records "prepared"; undoes all of
  // it on a failure.
  absl::StatusOr<std::vector<PreparedDevice>> Commit(const ClaimRef& claim, ClaimPlan& plan)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RollBack(const std::string& uid, bool release_cache) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status UnprepareOne(const ClaimRef& claim) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Another prepared claim holding one of `devices` (whole device vs its cores included).
  absl::Status CheckNoOverlap(const std::string& uid, const ClaimAllocation& alloc) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Save() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const NeuronPreparerOptions options_;
  ClaimSource& source_;
  mutable absl::Mutex mu_;  // one claim at a time: prepare is rare and the checkpoint is shared
  Checkpoint checkpoint_ ABSL_GUARDED_BY(mu_);
};

}  // namespace neuron::dra

#endif  // NEURON_LIB_DRA_NEURON_PREPARER_H_
