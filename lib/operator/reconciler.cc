// File: lib/operator/reconciler.cc
#include "lib/operator/reconciler.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/base/json_contains.h"
#include "lib/base/status_macros.h"
#include "lib/k8s/conditions.h"
#include "lib/k8s/errors.h"
#include "lib/k8s/object_view.h"
#include "lib/operator/status.h"
#include "lib/operator/ultraservers.h"
#include "spdlog/spdlog.h"

namespace neuron::op {
namespace {

using nlohmann::json;

constexpr absl::Duration kDeletionPoll = absl::Seconds(2);

std::string ChildNs(const Child& c) {
  return c.ref.namespaced ? StringAt(c.object, {"metadata", "namespace"}) : "";
}

// Two equality selectors can match one node unless they disagree on a key both name.
bool SelectorsOverlap(const std::map<std::string, std::string>& a,
                      const std::map<std::string, std::string>& b) {
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it != b.end() && it->second != v) return false;
  }
  return true;
}

// Where the live object of a child goes in the status inputs.
void Observe(const Child& c, json live, ObservedState& seen) {
  const std::string kind = StringMember(c.object, "kind");
  if (kind == "Module") {
    seen.module = std::move(live);
  } else if (kind == "Deployment" && c.component == Component::kScheduler) {
    seen.scheduler = std::move(live);  // kube-scheduler with its extender: the one Deployment
  } else if (kind == "DaemonSet") {
    switch (c.component) {
      case Component::kMetrics:
        seen.metrics_ds = std::move(live);
        break;
      case Component::kDra:
        seen.dra_ds = std::move(live);
        break;
      case Component::kDevicePlugin:
        seen.plugin_ds = std::move(live);
        break;
      default:
        break;
    }
  }
}

bool SameObject(const Child& c, const k8s::ResourceRef& ref, const json& item) {
  return c.ref.group == ref.group && c.ref.resource == ref.resource &&
         k8s::ObjectView(c.object).name() == k8s::ObjectView(item).name();
}

// DRA needs resource.k8s.io. Without it the spec is refused with a condition, not retried: the
// controller's periodic resync re-runs discovery and picks the API up once it is served.
std::optional<Blocker> DraNotServed(const DeviceConfig& dc, const ClusterApis& apis) {
  const std::string served =
      apis.DraServed() ? absl::StrCat("only resource.k8s.io/", apis.dra_version) : "none";
  if (dc.AwsDra() && apis.dra_version != "v1") {
    return Blocker{"DRANotServed",
                   absl::StrCat("draDriverImage runs AWS's DRA driver, which needs "
                                "resource.k8s.io/v1 (Kubernetes 1.34+); this cluster serves ",
                                served, ": use devicePluginImage, or allocation dra")};
  }
  if (dc.OurDra() && !apis.DraServed()) {
    return Blocker{
        "DRANotServed",
        absl::StrCat("allocation ", AllocationName(dc.spec.allocation),
                     " needs Dynamic Resource Allocation (resource.k8s.io v1 or v1beta1, "
                     "Kubernetes 1.32+), which this cluster does not serve: enable it, or set "
                     "allocation: devicePlugin")};
  }
  return std::nullopt;
}

std::string ConditionStatus(const json& status, const std::string& type) {
  if (!status.is_object()) return "";
  auto c = k8s::FindCondition(status.value("conditions", json::array()), type);
  return c ? c->status : "";
}

}  // namespace

std::string DeviceConfigKey(const DeviceConfig& dc) { return absl::StrCat(dc.ns, "/", dc.name); }

k8s::ResourceRef DeviceConfigRef() { return {kGroup, kStorageVersion, kPlural, true}; }

Reconciler::Reconciler(k8s::RestClient& client, OperatorSettings settings, NodesFn nodes,
                       k8s::EventRecorder* events, Clock* clock)
    : client_(client),
      settings_(std::move(settings)),
      nodes_(std::move(nodes)),
      events_(events),
      clock_(clock != nullptr ? *clock : Clock::Real()),
      discovery_(client) {}

void Reconciler::ForgetDiscovery() {
  std::lock_guard<std::mutex> lock(discovery_mu_);
  discovered_at_ = absl::InfinitePast();
}

absl::StatusOr<ClusterApis> Reconciler::DiscoverApis() {
  {
    std::lock_guard<std::mutex> lock(discovery_mu_);
    const absl::Time now = clock_.Now();
    if (now - discovered_at_ >= discovery_max_age_) {
      discovery_.Invalidate();
      discovered_at_ = now;
    }
  }
  ClusterApis apis;
  NEURON_ASSIGN_OR_RETURN(apis.kmm, discovery_.IsServed("kmm.sigs.x-k8s.io", "v1beta1", "modules"));
  NEURON_ASSIGN_OR_RETURN(bool nfd_upstream,
                          discovery_.IsServed("nfd.k8s-sigs.io", "v1alpha1", "nodefeaturerules"));
  NEURON_ASSIGN_OR_RETURN(bool nfd_openshift,
                          discovery_.IsServed("nfd.openshift.io", "v1alpha1", "nodefeaturerules"));
  // OpenShift's NFD operator serves its own group; prefer it where both are served.
  apis.nfd_group = nfd_openshift ? "nfd.openshift.io" : nfd_upstream ? "nfd.k8s-sigs.io" : "";
  NEURON_ASSIGN_OR_RETURN(apis.service_monitor,
                          discovery_.IsServed("monitoring.coreos.com", "v1", "servicemonitors"));
  NEURON_ASSIGN_OR_RETURN(apis.dra_version, DraVersion());
  NEURON_ASSIGN_OR_RETURN(apis.server_version, ServerVersion());
  return apis;
}

absl::StatusOr<std::string> Reconciler::DraVersion() {
  // v1 where served (1.34+: extendedResourceName, AWS's driver); else v1beta1 (1.32, 1.33).
  for (const char* version : {"v1", "v1beta1"}) {
    NEURON_ASSIGN_OR_RETURN(bool served,
                            discovery_.IsServed("resource.k8s.io", version, "deviceclasses"));
    if (served) return std::string(version);
  }
  return std::string();
}

absl::StatusOr<std::optional<KubeVersion>> Reconciler::ServerVersion() {
  std::lock_guard<std::mutex> lock(version_mu_);
  const absl::Time now = clock_.Now();
  if (now - server_version_at_ < kServerVersionMaxAge) return server_version_;
  absl::StatusOr<json> got = client_.GetPath("/version");
  if (!got.ok()) {
    if (server_version_at_ == absl::InfinitePast()) return got.status();
    spdlog::warn("apiserver version unavailable, keeping version={} error=\"{}\"",
                 server_version_ ? server_version_->ToString() : "unknown",
                 std::string(got.status().message()));
    return server_version_;
  }
  std::string git_version;
  if (got->is_object()) {
    auto it = got->find("gitVersion");
    if (it != got->end() && it->is_string()) git_version = it->get<std::string>();
  }
  std::optional<KubeVersion> parsed = ParseKubeVersion(git_version);
  if (!parsed) {
    spdlog::warn("apiserver gitVersion unreadable git_version=\"{}\": kube-scheduler image {}",
                 git_version, settings_.kube_scheduler_image);
  } else if (parsed != server_version_) {
    spdlog::info("apiserver version={} git_version={}", parsed->ToString(), git_version);
  }
  server_version_ = parsed;
  server_version_at_ = now;
  return server_version_;
}

absl::StatusOr<ReconcileResult> Reconciler::Reconcile(const std::string& ns,
                                                      const std::string& name) {
  absl::StatusOr<json> got = ReadDeviceConfig(ns, name);
  if (absl::IsNotFound(got.status())) {
    // Gone (its finalizer was removed by hand, or it never had one): namespaced children go with
    // the garbage collector; cluster-scoped ones carry only our label, so remove them here.
    DeviceConfig gone;
    gone.ns = ns;
    gone.name = name;
    NEURON_ASSIGN_OR_RETURN(ClusterApis apis, DiscoverApis());
    NEURON_RETURN_IF_ERROR(DeleteChildren(gone, apis, {}, std::nullopt));
    return ReconcileResult{};
  }
  NEURON_RETURN_IF_ERROR(got.status());
  const json& obj = *got;
  absl::StatusOr<DeviceConfig> parsed = ParseDeviceConfig(obj);
  if (!parsed.ok()) {
    spdlog::error("deviceconfig unreadable key={}/{} error=\"{}\"", ns, name,
                  std::string(parsed.status().message()));
    return ReconcileResult{};  // nothing to act on until it changes
  }
  const DeviceConfig& dc = *parsed;
  if (dc.deleting) return Finalize(dc);
  if (!dc.HasFinalizer()) NEURON_RETURN_IF_ERROR(EnsureFinalizer(obj));

  ObservedState seen;
  NEURON_ASSIGN_OR_RETURN(seen.apis, DiscoverApis());
  if (std::vector<FieldError> errors = ValidateDeviceConfig(dc); !errors.empty()) {
    seen.blocker = Blocker{"InvalidSpec", JoinFieldErrors(errors)};
  } else if (std::optional<Blocker> no_dra = DraNotServed(dc, seen.apis)) {
    seen.blocker = std::move(no_dra);
  } else {
    NEURON_ASSIGN_OR_RETURN(std::optional<std::string> other, OverlappingOwner(dc));
    if (other) {
      seen.blocker = Blocker{
          "SelectorOverlap",
          absl::StrCat("spec.selector can match the same nodes as DeviceConfig ", *other,
                       ", which was created first: make the selectors disjoint or delete one")};
    }
  }
  NEURON_ASSIGN_OR_RETURN(const std::vector<json> nodes, nodes_());
  std::vector<const json*> selected;
  for (const json& n : nodes) {
    const json& labels = MemberOrNull(n, {"metadata", "labels"});
    if (!SelectorMatches(dc.spec.selector, labels)) continue;
    ++seen.nodes_matching;
    if (StringMember(labels, kDraNodeLabel) == kDraNodeValue) ++seen.dra_nodes;
    selected.push_back(&n);
  }
  seen.ultra_servers = UltraServersStatus(selected);
  ReconcileResult result;
  absl::Status failed;
  if (!seen.blocker) {
    failed = Act(dc, obj, nodes, seen, result);
    if (!failed.ok()) {
      // Status still says what happened (a stale Ready=True must not outlive a refused spec).
      seen.failure = Blocker{k8s::IsTerminal(failed) ? "ApplyRejected" : "ApplyFailed",
                             std::string(failed.message())};
    }
  }
  const json old_status = obj.value("status", json::object());
  json status = ComputeStatus(dc, seen, old_status, clock_.Now());
  if (ConditionStatus(status, "Ready") != ConditionStatus(old_status, "Ready")) {
    const auto ready = k8s::FindCondition(status["conditions"], "Ready");
    const bool ok = ready && ready->status == "True";
    Emit(obj, ok ? k8s::kEventNormal : k8s::kEventWarning, ready ? ready->reason : "Unknown",
         ready ? ready->message : "");
    spdlog::info("deviceconfig ready={} key={} reason={}", ok, DeviceConfigKey(dc),
                 ready ? ready->reason : "");
  }
  if (status != old_status) {
    // A merge patch keeps what it does not name: fields dropped from status go as nulls.
    json patch = status;
    for (const auto& [key, value] : old_status.items()) {
      if (!status.contains(key)) patch[key] = nullptr;
    }
    absl::Status written = WriteStatus(obj, patch);
    if (!failed.ok()) {
      if (!written.ok()) {
        spdlog::warn("status write failed deviceconfig={} error=\"{}\"", DeviceConfigKey(dc),
                     std::string(written.message()));
      }
      return failed;
    }
    NEURON_RETURN_IF_ERROR(written);
  }
  if (!failed.ok()) return failed;
  return result;
}

absl::Status Reconciler::Act(const DeviceConfig& dc, const json& obj,
                             const std::vector<json>& nodes, ObservedState& seen,
                             ReconcileResult& result) {
  // Emulation places by the absence of Neuron labels: it needs no NFD.
  if (seen.apis.nfd_group.empty() && !dc.Emulated()) {
    seen.warnings.push_back(
        "NFD is not installed (no NodeFeatureRule API): Neuron nodes are not labelled "
        "feature.node.kubernetes.io/aws-neuron; install NFD or set spec.selector");
  }
  if (dc.OurDra() && dc.spec.dra.extended_resource && seen.apis.dra_version != "v1") {
    seen.warnings.push_back(absl::StrCat(
        "spec.dra.extendedResource needs resource.k8s.io/v1 (Kubernetes 1.34+), this cluster "
        "serves ",
        seen.apis.dra_version, ": the DeviceClass with extendedResourceName is left out"));
  }
  const std::vector<Child> children = DesiredChildren(dc, seen.apis, settings_);
  for (const Child& c : children) {
    absl::StatusOr<json> live = ApplyIfChanged(c);
    if (!live.ok()) {
      const std::string what = absl::StrCat(StringMember(c.object, "kind"), " ",
                                            StringAt(c.object, {"metadata", "name"}));
      spdlog::warn("apply failed deviceconfig={} object=\"{}\" error=\"{}\"", DeviceConfigKey(dc),
                   what, std::string(live.status().message()));
      Emit(obj, k8s::kEventWarning, "ApplyFailed",
           absl::StrCat(what, ": ", live.status().message()));
      return absl::Status(live.status().code(),
                          absl::StrCat("apply ", what, ": ", live.status().message()));
    }
    Observe(c, std::move(*live), seen);
  }
  NEURON_RETURN_IF_ERROR(DeleteChildren(dc, seen.apis, children, std::nullopt));
  // Without KMM no driver of ours loads anywhere: nodes are left as they are (tainting one
  // would only evict its workloads for a driver that never comes).
  if (seen.apis.kmm || dc.spec.driver_mode != DriverMode::kKmm) {
    NEURON_ASSIGN_OR_RETURN(seen.upgrade, RollDriver(dc, obj, nodes));
  }
  if (seen.upgrade) {
    result.requeue_after = seen.upgrade->recheck_after;
    result.upgrade = Progress(*seen.upgrade, clock_.Now());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<UpgradePlan>> Reconciler::RollDriver(const DeviceConfig& dc,
                                                                  const json& obj,
                                                                  const std::vector<json>& nodes) {
  const bool versioned = dc.spec.driver_mode == DriverMode::kKmm && !dc.spec.driver_version.empty();
  if (!versioned) {
    // KMM loads the driver on every selected node; no label or taint of ours has a use.
    NEURON_RETURN_IF_ERROR(ApplyNodeChanges(dc, PlanCleanup(dc, nodes, /*all=*/true)));
    return std::nullopt;
  }
  const std::vector<NodeUpgrade> previous =
      ParseNodeUpgrades(MemberOrNull(obj, {"status", "nodes"}));
  NodePods pods;
  if (dc.spec.upgrade.drain.enable) {
    NEURON_ASSIGN_OR_RETURN(pods, DrainPods(dc, nodes));
  }
  // A new value of the retry annotation sends the failed nodes back, once.
  const std::string retry(k8s::ObjectView(obj).annotation(kRetryUpgradeAnnotation));
  const std::string handled = StringAt(obj, {"status", "upgrade", "retryHandled"});
  const bool retry_failed = !retry.empty() && retry != handled;
  UpgradePlan plan = PlanUpgrade(dc, nodes, previous, clock_.Now(), pods, retry_failed);
  plan.retry_handled = retry.empty() ? handled : retry;
  if (retry_failed) {
    spdlog::info("driver upgrade deviceconfig={} retrying failed nodes annotation={}",
                 DeviceConfigKey(dc), retry);
  }
  NEURON_RETURN_IF_ERROR(ApplyNodeChanges(dc, plan.changes));
  RunDrains(dc, obj, plan);
  for (const Transition& t : plan.transitions) {
    const bool failed = t.to == NodeUpgradeState::kFailed;
    const char* type = failed ? k8s::kEventWarning : k8s::kEventNormal;
    const std::string reason = failed                            ? "DriverUpgradeFailed"
                               : t.to == NodeUpgradeState::kDone ? "DriverUpgraded"
                                                                 : "DriverUpgrading";
    spdlog::log(failed ? spdlog::level::warn : spdlog::level::info,
                "driver upgrade deviceconfig={} state={} node={} detail=\"{}\"",
                DeviceConfigKey(dc), StateName(t.to), t.node, t.message);
    Emit(obj, type, reason, absl::StrCat("node ", t.node, ": ", t.message));
    auto node = std::find_if(nodes.begin(), nodes.end(),
                             [&](const json& n) { return k8s::NodeView(n).name() == t.node; });
    if (node != nodes.end()) {
      Emit(*node, type, reason,
           absl::StrCat("DeviceConfig ", DeviceConfigKey(dc), ": ", t.message));
    }
  }
  return plan;
}

absl::Status Reconciler::ApplyNodeChanges(const DeviceConfig& dc,
                                          const std::vector<NodeChange>& changes) {
  for (const NodeChange& c : changes) {
    // Conditional on the resourceVersion planned from: a node changed since (a 409) fails the
    // pass, and the retry plans again from what the node is now.
    absl::StatusOr<json> r =
        client_.Patch(k8s::resources::kNodes, "", c.node, k8s::PatchType::kMerge, c.Patch());
    if (absl::IsNotFound(r.status())) continue;  // the node is gone: nothing to change
    if (!r.ok()) {
      spdlog::warn("node update failed deviceconfig={} node={} error=\"{}\"", DeviceConfigKey(dc),
                   c.node, std::string(r.status().message()));
      return r.status();
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ReconcileResult> Reconciler::Finalize(const DeviceConfig& dc) {
  if (!dc.HasFinalizer()) return ReconcileResult{};
  NEURON_ASSIGN_OR_RETURN(ClusterApis apis, DiscoverApis());
  // Stage by stage; then whatever is left (an object without a component label).
  const std::vector<Component> order = DeletionOrder();
  std::vector<std::optional<Component>> stages(order.begin(), order.end());
  stages.push_back(std::nullopt);
  for (const std::optional<Component>& stage : stages) {
    NEURON_RETURN_IF_ERROR(DeleteChildren(dc, apis, {}, stage));
    NEURON_ASSIGN_OR_RETURN(std::vector<LiveChild> left, ListChildren(dc, apis, stage));
    if (!left.empty()) {
      spdlog::info("deviceconfig deleting key={} waiting_for={} objects={}", DeviceConfigKey(dc),
                   stage ? ComponentName(*stage) : "other", left.size());
      ReconcileResult poll;
      poll.requeue_after = kDeletionPoll;
      return poll;
    }
  }

  // The driver is gone from every node: take the upgrade labels and taints off them.
  NEURON_ASSIGN_OR_RETURN(const std::vector<json> nodes, nodes_());
  NEURON_RETURN_IF_ERROR(ApplyNodeChanges(dc, PlanCleanup(dc, nodes, /*all=*/true)));

  json finalizers = json::array();
  for (const std::string& f : dc.finalizers) {
    if (f != kFinalizer) finalizers.push_back(f);
  }
  // The resourceVersion makes the patch conditional: a concurrent finalizer change -> 409, retry.
  const json patch = {
      {"metadata", {{"finalizers", finalizers}, {"resourceVersion", dc.resource_version}}}};
  absl::StatusOr<json> r =
      client_.Patch(DeviceConfigRef(), dc.ns, dc.name, k8s::PatchType::kMerge, patch);
  if (!r.ok() && !absl::IsNotFound(r.status())) return r.status();
  spdlog::info("deviceconfig finalized key={}: every child is gone", DeviceConfigKey(dc));
  return ReconcileResult{};
}

absl::Status Reconciler::EnsureFinalizer(const json& obj) {
  const k8s::ObjectView dc(obj);
  const json* present = MemberAt(obj, {"metadata", "finalizers"});
  json finalizers = present != nullptr && present->is_array() ? *present : json::array();
  finalizers.push_back(kFinalizer);
  const json patch = {
      {"metadata", {{"finalizers", finalizers}, {"resourceVersion", dc.resource_version()}}}};
  return client_
      .Patch(DeviceConfigRef(), std::string(dc.namespace_()), std::string(dc.name()),
             k8s::PatchType::kMerge, patch)
      .status();
}

absl::StatusOr<std::optional<std::string>> Reconciler::OverlappingOwner(const DeviceConfig& dc) {
  std::vector<json> items;
  if (auto cached = reader_ ? reader_->List(DeviceConfigRef(), "", "", "") : std::nullopt) {
    for (const k8s::ObjectPtr& o : *cached) items.push_back(*o);
  } else {
    NEURON_ASSIGN_OR_RETURN(k8s::ListResult all, client_.ListAll(DeviceConfigRef(), ""));
    items = std::move(all.items);
  }
  std::optional<std::pair<absl::Time, std::string>> first;
  for (const json& item : items) {
    absl::StatusOr<DeviceConfig> other = ParseDeviceConfig(item);
    if (!other.ok() || other->uid == dc.uid || other->deleting) continue;
    if (!ValidateDeviceConfig(*other).empty()) continue;
    if (!SelectorsOverlap(dc.spec.selector, other->spec.selector)) continue;
    const std::string key = DeviceConfigKey(*other);
    // Earlier creation wins; same second -> the smaller namespace/name, so both sides agree.
    const bool earlier = other->creation_time < dc.creation_time ||
                         (other->creation_time == dc.creation_time && key < DeviceConfigKey(dc));
    if (earlier && (!first || std::make_pair(other->creation_time, key) < *first)) {
      first = {other->creation_time, key};
    }
  }
  if (!first) return std::nullopt;
  return first->second;
}

absl::StatusOr<std::vector<Reconciler::LiveChild>> Reconciler::ListChildren(
    const DeviceConfig& dc, const ClusterApis& apis, std::optional<Component> component) {
  k8s::ListOptions opts;
  opts.label_selector = absl::StrCat(kOwnerLabel, "=", OwnerLabelValue(dc));
  std::vector<LiveChild> out;
  for (const k8s::ResourceRef& ref : ChildKinds(apis)) {
    const std::string ns = ref.namespaced ? dc.ns : "";
    std::vector<json> items;
    if (auto cached =
            reader_ ? reader_->List(ref, ns, kOwnerLabel, OwnerLabelValue(dc)) : std::nullopt) {
      for (const k8s::ObjectPtr& o : *cached) items.push_back(*o);
    } else {
      absl::StatusOr<k8s::ListResult> list = client_.ListAll(ref, ns, opts);
      if (absl::IsNotFound(list.status())) {  // the API went away since discovery
        ForgetDiscovery();
        continue;
      }
      NEURON_RETURN_IF_ERROR(list.status());
      items = std::move(list->items);
    }
    for (json& item : items) {
      const json& labels = MemberOrNull(item, {"metadata", "labels"});
      if (component && StringMember(labels, kComponentLabel) != ComponentName(*component)) continue;
      out.push_back({ref, ns, std::move(item)});
    }
  }
  return out;
}

absl::Status Reconciler::DeleteChildren(const DeviceConfig& dc, const ClusterApis& apis,
                                        const std::vector<Child>& keep,
                                        std::optional<Component> component) {
  NEURON_ASSIGN_OR_RETURN(std::vector<LiveChild> live, ListChildren(dc, apis, component));
  for (const LiveChild& l : live) {
    if (std::any_of(keep.begin(), keep.end(),
                    [&](const Child& c) { return SameObject(c, l.ref, l.object); })) {
      continue;
    }
    if (k8s::ObjectView(l.object).deleting()) continue;  // already going
    const std::string name(k8s::ObjectView(l.object).name());
    k8s::DeleteOptions del;
    // Foreground: the object stays until its pods are gone, so the next stage (the driver)
    // starts only when nothing holds /dev/neuron* any more.
    del.propagation_policy = "Foreground";
    absl::StatusOr<json> r = client_.Delete(l.ref, l.ns, name, del);
    if (absl::IsNotFound(r.status())) continue;
    NEURON_RETURN_IF_ERROR(r.status());
    spdlog::info("deleted deviceconfig={} object=\"{} {}\"", DeviceConfigKey(dc), l.ref.resource,
                 name);
  }
  return absl::OkStatus();
}

absl::StatusOr<json> Reconciler::ReadDeviceConfig(const std::string& ns, const std::string& name) {
  if (auto cached = reader_ ? reader_->Get(DeviceConfigRef(), ns, name) : std::nullopt) {
    if (*cached == nullptr) {
      return absl::NotFoundError(absl::StrCat("deviceconfigs \"", name, "\" not found"));
    }
    return **cached;
  }
  return client_.Get(DeviceConfigRef(), ns, name);
}

absl::StatusOr<json> Reconciler::ApplyIfChanged(const Child& c) {
  const std::string ns = ChildNs(c);
  const std::string name = StringAt(c.object, {"metadata", "name"});
  if (auto cached = reader_ ? reader_->Get(c.ref, ns, name) : std::nullopt) {
    if (*cached != nullptr && JsonContains(**cached, c.object)) return **cached;
  }
  absl::StatusOr<json> live =
      client_.Apply(c.ref, ns, c.object, settings_.field_manager, /*force=*/true);
  if (absl::IsNotFound(live.status())) ForgetDiscovery();  // a CRD went away
  return live;
}

absl::Status Reconciler::WriteStatus(const json& obj, const json& status) {
  return client_
      .Patch(DeviceConfigRef(), std::string(k8s::ObjectView(obj).namespace_()),
             std::string(k8s::ObjectView(obj).name()), k8s::PatchType::kMerge, {{"status", status}},
             k8s::PatchOptions{"", false, "status"})
      .status();
}

void Reconciler::Emit(const json& obj, const std::string& type, const std::string& reason,
                      const std::string& message) {
  if (events_ == nullptr) return;
  if (absl::Status s = events_->Event(obj, type, reason, message); !s.ok()) {
    spdlog::warn("event failed reason={} error=\"{}\"", reason, std::string(s.message()));
  }
}

}  // namespace neuron::op
