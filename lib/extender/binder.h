// File: lib/extender/binder.h
// Bind in one API call. kube-scheduler hands the bind to the extender, which then creates the
// Binding itself:
//   1. the pod's request comes from the watch (ClusterView::Pending), so no GET; only a pod the
//      watch has not shown yet (or shows with another UID) is read from the API;
//   2. the best fit (lib/topology, the device plugin's function) is chosen and reserved in the
//      ClusterView, so concurrent binds to one node never overlap;
//   3. POST pods/<name>/binding carrying the handshake annotations in metadata.annotations and
//      the pod's UID as precondition (for a pod of an UltraServer group also its placement,
//      pod_group.h, after the group's set is reserved: ClusterView::PlaceGroupPod): the apiserver
//      merges those keys into the pod in the same write that sets nodeName (other keys are kept),
//      and refuses a recreated or bound pod.
// No Event of ours: kube-scheduler records Scheduled after a successful extender bind. A 409
// where the pod already sits on that node is a retry after a lost reply, hence success.
//
// The bind acts with our ServiceAccount, so it refuses what the scheduler that owns this
// extender would never ask (an endpoint that binds anything would let any caller skip
// kube-scheduler's taint, affinity and spread checks): a pod of another scheduler, a pod that
// asks for no Neuron resource, a node that does not exist or that our filter refuses.
#pragma once

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/base/clock.h"
#include "lib/extender/cluster_view.h"
#include "lib/extender/wire.h"
#include "lib/k8s/rest_client.h"
#include "nlohmann/json.hpp"

namespace neuron::extender {

struct BindOptions {
  // How long a choice stays reserved if the watch never shows the annotation.
  absl::Duration reservation_ttl = absl::Seconds(60);
  // How long an UltraServer group's set stays reserved for it after its first bind when the
  // group never completes (all N pods bound ends the reservation earlier).
  absl::Duration group_reservation_ttl = absl::Minutes(2);
  // The profile (spec.schedulerName) of the kube-scheduler that calls this extender.
  std::string scheduler_name = "neuron-scheduler";
};

// Why a bind was refused before any write (metrics label `reason`).
inline constexpr char kRefusedUnknownPod[] = "unknown_pod";
inline constexpr char kRefusedSchedulerName[] = "scheduler_name";
inline constexpr char kRefusedNoNeuronRequest[] = "no_neuron_request";
inline constexpr char kRefusedUnknownNode[] = "unknown_node";
inline constexpr char kRefusedFilter[] = "filter";

// Outcome label for metrics: "ok", "conflict", "no_fit", "refused", "error". `refusal` is one of
// the kRefused* reasons when label is "refused".
struct BindOutcome {
  absl::Status status;
  std::string label;
  Choice choice;
  std::string refusal;
};

class Binder {
 public:
  Binder(k8s::RestClient& client, ClusterView& view, Clock* clock = nullptr, BindOptions opts = {});
  BindOutcome Bind(const BindingArgs& args);

 private:
  // What bind needs of the pod: from the watch, else (rarely) from the API.
  absl::StatusOr<PodInfo> PodToBind(const BindingArgs& args);
  // A refusal (label "refused") when the owning scheduler would never ask this bind.
  std::optional<BindOutcome> Refusal(const BindingArgs& args, const PodInfo& pod) const;
  absl::Status PostBinding(const BindingArgs& args, const std::string& uid,
                           const nlohmann::json& annotations);

  k8s::RestClient& client_;
  ClusterView& view_;
  Clock& clock_;
  BindOptions opts_;
};

}  // namespace neuron::extender
