// File: lib/extender/binder.cc
#include "lib/extender/binder.h"

#include <spdlog/spdlog.h>

#include "absl/strings/str_cat.h"
#include "lib/deviceplugin/handshake.h"
#include "lib/k8s/errors.h"
#include "lib/k8s/resource.h"

namespace neuron::extender {
namespace {

using nlohmann::json;

BindOutcome Outcome(absl::Status s, const char* label, Choice c = {}) {
  return BindOutcome{std::move(s), label, std::move(c)};
}

}  // namespace

Binder::Binder(k8s::RestClient& client, ClusterView& view, k8s::EventRecorder* events, Clock* clock,
               BindOptions opts)
    : client_(client),
      view_(view),
      events_(events),
      clock_(clock ? *clock : Clock::Real()),
      opts_(opts) {}

absl::Status Binder::PostBinding(const BindingArgs& args, const std::string& uid) {
  // POST /api/v1/namespaces/<ns>/pods/<name>/binding
  const k8s::ResourceRef binding{"", "v1", "pods/" + args.pod_name + "/binding", true};
  json body = {{"apiVersion", "v1"},
               {"kind", "Binding"},
               {"metadata", {{"name", args.pod_name}, {"namespace", args.pod_namespace}}},
               {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", args.node}}}};
  if (!uid.empty()) body["metadata"]["uid"] = uid;
  absl::Status s = client_.Create(binding, args.pod_namespace, body).status();
  if (s.ok() || !(k8s::IsConflict(s) || absl::IsAlreadyExists(s))) return s;
  // A retry after a lost reply: the pod may already be ours on that node.
  absl::StatusOr<json> pod = client_.Get(k8s::resources::kPods, args.pod_namespace, args.pod_name);
  if (pod.ok() && pod->value("/spec/nodeName"_json_pointer, "") == args.node) {
    return absl::OkStatus();
  }
  return s;
}

BindOutcome Binder::Bind(const BindingArgs& args) {
  absl::StatusOr<json> obj = client_.Get(k8s::resources::kPods, args.pod_namespace, args.pod_name);
  if (!obj.ok()) {
    return Outcome(absl::Status(obj.status().code(),
                                absl::StrCat("get pod ", args.pod_namespace, "/", args.pod_name,
                                             ": ", obj.status().message())),
                   "error");
  }
  absl::StatusOr<PodInfo> pod = ParsePod(*obj);
  if (!pod.ok()) return Outcome(pod.status(), "error");
  if (!args.pod_uid.empty() && !pod->uid.empty() && pod->uid != args.pod_uid) {
    return Outcome(absl::FailedPreconditionError(
                       absl::StrCat("pod ", pod->Key(), " was recreated (UID ", pod->uid,
                                    ", binding asked for ", args.pod_uid, ")")),
                   "conflict");
  }
  if (!pod->node_name.empty()) {
    if (pod->node_name == args.node) return Outcome(absl::OkStatus(), "ok");  // retry of a bind
    return Outcome(absl::FailedPreconditionError(
                       absl::StrCat("pod ", pod->Key(), " is already bound to ", pod->node_name)),
                   "conflict");
  }
  Choice choice;
  if (pod->request.Any()) {
    absl::StatusOr<Choice> c = view_.ChooseAndReserve(args.node, *pod, opts_.reservation_ttl);
    if (!c.ok()) {
      return Outcome(c.status(), absl::IsFailedPrecondition(c.status()) ? "no_fit" : "error");
    }
    choice = std::move(*c);
    const std::string reservation = pod->uid.empty() ? pod->Key() : pod->uid;
    const json patch = {{"metadata",
                         {{"annotations",
                           {{deviceplugin::kAnnotationIds, deviceplugin::FormatIdList(choice.ids)},
                            {deviceplugin::kAnnotationType, deviceplugin::ShortName(choice.kind)},
                            {deviceplugin::kAnnotationAllocated, "false"},
                            {deviceplugin::kAnnotationAllocTime,
                             std::to_string(absl::ToUnixNanos(clock_.Now()))}}}}}};
    // A merge patch has no resourceVersion precondition: a 409 is safe to resend as is.
    absl::Status s = k8s::RetryOnConflict([&] {
      return client_
          .Patch(k8s::resources::kPods, args.pod_namespace, args.pod_name, k8s::PatchType::kMerge,
                 patch)
          .status();
    });
    if (!s.ok()) {
      view_.Release(reservation);
      return Outcome(s, "error");
    }
    if (s = PostBinding(args, pod->uid); !s.ok()) {
      view_.Release(reservation);
      return Outcome(s, k8s::IsConflict(s) ? "conflict" : "error");
    }
  } else if (absl::Status s = PostBinding(args, pod->uid); !s.ok()) {
    return Outcome(s, "error");
  }
  const std::string ids = deviceplugin::FormatRanges(choice.ids);
  spdlog::info("pod bound pod={} node={} kind={} ids={}", pod->Key(), args.node,
               deviceplugin::ShortName(choice.kind), ids);
  if (events_ && !choice.ids.empty()) {
    absl::Status e = events_->Event(*obj, k8s::kEventNormal, "NeuronAssigned",
                                    absl::StrCat("Assigned ", deviceplugin::ShortName(choice.kind),
                                                 " ", ids, " on node ", args.node));
    if (!e.ok()) {
      spdlog::warn("event failed pod={} error=\"{}\"", pod->Key(), std::string(e.message()));
    }
  }
  return Outcome(absl::OkStatus(), "ok", std::move(choice));
}

}  // namespace neuron::extender
