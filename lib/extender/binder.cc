// File: lib/extender/binder.cc
#include "lib/extender/binder.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/assignment/annotations.h"
#include "lib/extender/decide.h"
#include "lib/extender/group_decide.h"
#include "lib/k8s/errors.h"
#include "lib/k8s/resource.h"

namespace neuron::extender {
namespace {

using nlohmann::json;

BindOutcome Outcome(absl::Status s, const char* label, Choice c = {}) {
  return BindOutcome{std::move(s), label, std::move(c), {}};
}

BindOutcome Refused(const char* reason, const std::string& message) {
  return BindOutcome{absl::PermissionDeniedError(message), "refused", {}, reason};
}

// The extender's half of the handshake with the device plugin: the choice, not yet allocated.
json HandshakeAnnotations(const Choice& choice, absl::Time now) {
  return assignment::Format({choice.kind, choice.ids, false, absl::ToUnixNanos(now)});
}

// The group's placement, for the device plugin's Allocate (pod_group.h).
void AddPlacement(const ultraserver::Placement& p, json& annotations) {
  annotations[kSetSizeAnnotation] = std::to_string(p.member.size);
  annotations[kServerIdAnnotation] = p.member.server_id;
  annotations[kNodeIdAnnotation] = std::to_string(p.member.node_id);
  annotations[kModeAnnotation] = std::to_string(static_cast<int>(p.member.mode));
  annotations[kRankAnnotation] = std::to_string(p.rank);
  annotations[kRank0HostAnnotation] = p.rank0_host;
}

}  // namespace

Binder::Binder(k8s::RestClient& client, ClusterView& view, Clock* clock, BindOptions opts)
    : client_(client),
      view_(view),
      clock_(clock ? *clock : Clock::Real()),
      opts_(std::move(opts)) {}

absl::StatusOr<PodInfo> Binder::PodToBind(const BindingArgs& args) {
  PodInfo pod;
  pod.ns = args.pod_namespace;
  pod.name = args.pod_name;
  if (std::optional<PendingPod> p = view_.Pending(pod.Key());
      p && (args.pod_uid.empty() || p->uid == args.pod_uid)) {
    pod.uid = p->uid;
    pod.request = p->request;
    pod.scheduler_name = p->scheduler_name;
    pod.group = p->group;
    return pod;
  }
  // kube-scheduler's informer saw the pod before our watch did: read it this once.
  absl::StatusOr<json> obj = client_.Get(k8s::resources::kPods, pod.ns, pod.name);
  if (!obj.ok()) {
    return absl::Status(obj.status().code(),
                        absl::StrCat("get pod ", pod.Key(), ": ", obj.status().message()));
  }
  absl::StatusOr<PodInfo> read = ParsePod(*obj);
  if (!read.ok()) return read.status();
  if (!args.pod_uid.empty() && !read->uid.empty() && read->uid != args.pod_uid) {
    return absl::FailedPreconditionError(absl::StrCat("pod ", read->Key(), " was recreated (UID ",
                                                      read->uid, ", binding asked for ",
                                                      args.pod_uid, ")"));
  }
  return read;
}

absl::Status Binder::PostBinding(const BindingArgs& args, const std::string& uid,
                                 const json& annotations) {
  // POST /api/v1/namespaces/<ns>/pods/<name>/binding
  const k8s::ResourceRef binding{"", "v1", "pods/" + args.pod_name + "/binding", true};
  json meta = {{"name", args.pod_name}, {"namespace", args.pod_namespace}};
  if (!uid.empty()) meta["uid"] = uid;
  if (!annotations.empty()) meta["annotations"] = annotations;
  const json body = {{"apiVersion", "v1"},
                     {"kind", "Binding"},
                     {"metadata", std::move(meta)},
                     {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", args.node}}}};
  absl::Status s = client_.Create(binding, args.pod_namespace, body).status();
  if (s.ok() || !(k8s::IsConflict(s) || absl::IsAlreadyExists(s))) return s;
  // A retry after a lost reply: the pod may already be ours on that node.
  absl::StatusOr<json> pod = client_.Get(k8s::resources::kPods, args.pod_namespace, args.pod_name);
  if (pod.ok() && pod->value("/spec/nodeName"_json_pointer, "") == args.node &&
      (uid.empty() || pod->value("/metadata/uid"_json_pointer, "") == uid)) {
    return absl::OkStatus();
  }
  return s;
}

std::optional<BindOutcome> Binder::Refusal(const BindingArgs& args, const PodInfo& pod) const {
  if (pod.scheduler_name != opts_.scheduler_name) {
    return Refused(
        kRefusedSchedulerName,
        absl::StrCat("pod ", pod.Key(), " is scheduled by \"", pod.scheduler_name, "\", not by \"",
                     opts_.scheduler_name, "\", which this extender serves"));
  }
  if (!pod.request.Any()) {
    return Refused(kRefusedNoNeuronRequest,
                   absl::StrCat("pod ", pod.Key(), " asks for no Neuron resource"));
  }
  std::shared_ptr<const NodeState> node = view_.Snapshot(args.node, pod.Key());
  if (!node) {
    return Refused(kRefusedUnknownNode, absl::StrCat("node ", args.node, " is not known"));
  }
  std::deque<Verdict> pool;
  const Verdict v = pod.group ? *GroupVerdicts(view_, pod, {args.node}, pool).front()
                              : Evaluate(node.get(), pod.request);
  if (!v.fits) {
    return Refused(kRefusedFilter,
                   absl::StrCat("node ", args.node, " does not pass the filter: ", v.reason));
  }
  return std::nullopt;
}

BindOutcome Binder::Bind(const BindingArgs& args) {
  absl::StatusOr<PodInfo> pod = PodToBind(args);
  if (absl::IsNotFound(pod.status())) {
    return Refused(kRefusedUnknownPod, std::string(pod.status().message()));
  }
  if (!pod.ok()) {
    return Outcome(pod.status(), absl::IsFailedPrecondition(pod.status()) ? "conflict" : "error");
  }
  if (!pod->node_name.empty()) {
    if (pod->node_name == args.node) return Outcome(absl::OkStatus(), "ok");  // retry of a bind
    return Outcome(absl::FailedPreconditionError(
                       absl::StrCat("pod ", pod->Key(), " is already bound to ", pod->node_name)),
                   "conflict");
  }
  if (std::optional<BindOutcome> refused = Refusal(args, *pod)) return *std::move(refused);
  const std::string reservation = pod->uid.empty() ? pod->Key() : pod->uid;
  std::optional<ultraserver::Placement> placement;
  if (pod->group) {
    absl::StatusOr<ultraserver::Placement> p =
        view_.PlaceGroupPod(*pod, args.node, opts_.group_reservation_ttl);
    if (!p.ok()) return Outcome(p.status(), "no_fit");
    placement = *std::move(p);
  }
  absl::StatusOr<Choice> c = view_.ChooseAndReserve(args.node, *pod, opts_.reservation_ttl);
  if (!c.ok()) {
    if (placement) view_.UnplaceGroupPod(*pod);
    return Outcome(c.status(), absl::IsFailedPrecondition(c.status()) ? "no_fit" : "error");
  }
  Choice choice = std::move(*c);
  json annotations = HandshakeAnnotations(choice, clock_.Now());
  if (placement) AddPlacement(*placement, annotations);
  if (absl::Status s = PostBinding(args, pod->uid, annotations); !s.ok()) {
    view_.Release(reservation);
    if (placement) view_.UnplaceGroupPod(*pod);
    return Outcome(s, k8s::IsConflict(s) ? "conflict" : "error");
  }
  spdlog::info("pod bound pod={} node={} kind={} ids={}", pod->Key(), args.node,
               assignment::ShortName(choice.kind), assignment::FormatRanges(choice.ids));
  return Outcome(absl::OkStatus(), "ok", std::move(choice));
}

}  // namespace neuron::extender
