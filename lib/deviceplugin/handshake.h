// File: lib/deviceplugin/handshake.h
// The pod handshake with the scheduler extender, over pod annotations:
//   extender (bind):  AWS_NEURON_IDS=<ids of the requested kind>, NEURON_RESOURCE_TYPE=neuron|
//                     neuroncore, NEURON_ALLOCATED=false, NEURON_ALLOC_TIME=<unix ns>
//   plugin (after Allocate): every pod on this node that holds Neuron resources (per the
//                     kubelet's PodResources API) carries the IDs it really holds and
//                     NEURON_ALLOCATED=true. Only these keys are merge-patched.
// GetPreferredAllocation reads the extender's choice back as a hint (AllocationHints).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "lib/assignment/annotations.h"
#include "lib/assignment/ids.h"
#include "lib/deviceplugin/plugin_server.h"
#include "lib/deviceplugin/pod_resources.h"

namespace neuron::deviceplugin {

struct PodAnnotations {
  std::string ns, name;
  std::map<std::string, std::string> annotations;
};

struct AnnotationPatch {
  std::string ns, name;
  std::map<std::string, std::string> set;  // only the keys that change
};

// The API-server side (lib/k8s in production, a double in tests).
class PodDirectory {
 public:
  virtual ~PodDirectory() = default;
  // Pods bound to this node (spec.nodeName), with their annotations.
  virtual absl::StatusOr<std::vector<PodAnnotations>> ListNodePods() = 0;
  // JSON merge patch of metadata.annotations with exactly `set` (other keys untouched).
  virtual absl::Status PatchAnnotations(const std::string& ns, const std::string& name,
                                        const std::map<std::string, std::string>& set) = 0;
};

// Pure: the patches that make `pods` agree with `held`.
std::vector<AnnotationPatch> PlanHandshake(const std::vector<PodHoldings>& held,
                                           const std::vector<PodAnnotations>& pods);

// The extender's pending choice for `kind` and `size` among `pods`: a pod with
// NEURON_ALLOCATED=false, NEURON_RESOURCE_TYPE of `kind` and `size` parseable IDs; the oldest
// NEURON_ALLOC_TIME wins. nullopt if none.
std::optional<std::vector<int>> PendingChoice(const std::vector<PodAnnotations>& pods,
                                              assignment::ResourceKind kind, int size);

// The annotations of the pod among `pods` whose pending choice (as PendingChoice reads it) is
// exactly `ids` of `kind`, the oldest choice first; nullopt if none.
std::optional<std::map<std::string, std::string>> PendingPodFor(
    const std::vector<PodAnnotations>& pods, assignment::ResourceKind kind,
    const std::vector<int>& ids);

class Handshake final : public AllocationHints {
 public:
  using HoldingsFn = std::function<absl::StatusOr<std::vector<PodHoldings>>()>;
  Handshake(PodDirectory& pods, HoldingsFn holdings)
      : pods_(pods), holdings_(std::move(holdings)) {}

  // One pass: PodResources List, pod list, patches. Returns the first error (patches for other
  // pods are still attempted).
  absl::Status Reconcile();
  int patches_applied() const;

  std::optional<std::vector<int>> HintFor(assignment::ResourceKind kind, int size) override;
  std::optional<std::map<std::string, std::string>> PendingPodFor(
      assignment::ResourceKind kind, const std::vector<int>& ids) override;

 private:
  PodDirectory& pods_;
  HoldingsFn holdings_;
  mutable absl::Mutex mu_;
  int patches_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace neuron::deviceplugin
