// File: tests/fakes/apiserver/controllers.cc
// What kube-controller-manager does on every real cluster and tests must therefore expect:
// - its root-ca-cert-publisher puts a `kube-root-ca.crt` ConfigMap into every namespace and puts
//   it back when it is deleted. A test that assumes a new namespace is empty fails on a real
//   cluster, so the fake does the same. Simplification: upstream publishes asynchronously,
//   shortly after the Namespace is created; here it is the very next resourceVersion.
// - its disruption controller keeps the status of every PodDisruptionBudget (expectedPods,
//   desiredHealthy, currentHealthy, disruptionsAllowed, disruptedPods, the DisruptionAllowed
//   condition) current, which pods/eviction relies on. Simplification: upstream reacts to
//   informer events asynchronously; here every write request (and Put()) is followed by a sync of
//   all budgets, and an eviction syncs first, so a budget is never stale when consulted. The
//   status is owned by the emulation: a status a test writes is recomputed at the next sync.
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/fakes/apiserver/api_core.h"
#include "tests/fakes/apiserver/disruption.h"
#include "tests/fakes/apiserver/selectors.h"

namespace neuron::fakes::apiserver {
namespace {

constexpr char kRootCaName[] = "kube-root-ca.crt";

// Not a usable CA: nothing in the fake speaks TLS. Tests only need the object to exist.
constexpr char kFakeCaPem[] =
    "-----BEGIN CERTIFICATE-----\n"
    "ZmFrZS1hcGlzZXJ2ZXIgcm9vdCBDQSAobm90IGEgcmVhbCBjZXJ0aWZpY2F0ZSk=\n"
    "-----END CERTIFICATE-----\n";

}  // namespace

void ApiCore::PublishRootCa(const std::string& ns) {
  const ResourceType* cm = registry_.Find("", "v1", "configmaps");
  if (cm == nullptr) return;
  ResourcePath rp;
  rp.type = *cm;
  rp.ns = ns;
  rp.name = kRootCaName;
  if (store_.Find(rp.Key()) != nullptr) return;
  json obj = {{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata",
               {{"name", kRootCaName},
                {"annotations",
                 {{"kubernetes.io/description",
                   "Contains a CA bundle that can be used to verify the kube-apiserver when using "
                   "internal endpoints such as the internal service IP or kubernetes.default.svc. "
                   "No other usage is guaranteed across distributions of Kubernetes clusters."}}}}},
              {"data", {{"ca.crt", kFakeCaPem}}}};
  CreateObject(rp, std::move(obj), WriteCtx{"kube-controller-manager", "Update", ""}, false);
}

void ApiCore::RepublishRootCa(const std::string& removed_key) {
  // Store keys are "group/plural/namespace/name".
  const std::vector<std::string> k = absl::StrSplit(removed_key, '/');
  if (k.size() != 4 || !k[0].empty() || k[1] != "configmaps" || k[3] != kRootCaName) return;
  // Only while the namespace lives and is not terminating (its deletion removes the contents).
  const json* ns = store_.Find(StoreKey("", "namespaces", "", k[2]));
  if (ns == nullptr || ns->contains("/metadata/deletionTimestamp"_json_pointer)) return;
  PublishRootCa(k[2]);
}

namespace {

// The kinds upstream's scale client finds a /scale for among the built-ins the fake serves.
bool HasScale(const ResourceType& t) {
  if (!t.crd_name.empty()) return true;  // Simplification: as if every CRD had a scale subresource
  return t.group == "apps" &&
         (t.kind == "Deployment" || t.kind == "ReplicaSet" || t.kind == "StatefulSet");
}

// spec.replicas as the scale subresource reports it (defaulted to 1, as apps/v1 defaults it).
// Simplification: a custom resource's replicas are read at spec.replicas too, whatever its CRD's
// specReplicasPath says.
int64_t Replicas(const json& obj) {
  const json r = obj.value("/spec/replicas"_json_pointer, json(1));
  return r.is_number_integer() ? r.get<int64_t>() : 1;
}

std::string GroupOf(const std::string& api_version) {
  const size_t slash = api_version.find('/');
  return slash == std::string::npos ? "" : api_version.substr(0, slash);
}

}  // namespace

absl::StatusOr<json> ApiCore::ControllerScale(const std::string& ns, const json& ref) {
  const std::string api_version = ref.value("apiVersion", "");
  const std::string group = GroupOf(api_version);
  const std::string kind = ref.value("kind", "");
  const ResourceType* type = nullptr;
  for (const ResourceType* t : registry_.All()) {
    if (t->group == group && t->kind == kind) type = t;
  }
  if (type == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("no matches for kind \"", kind, "\" in version \"", api_version, "\""));
  }
  const json* owner = store_.Find(StoreKey(group, type->plural, ns, ref.value("name", "")));
  if (owner == nullptr || FieldValue(*owner, "metadata.uid") != ref.value("uid", "")) {
    return json(nullptr);
  }
  // A ReplicaSet of a Deployment counts with the Deployment's scale (getPodDeployment); when
  // that Deployment is gone, with its own (the generic scale finder).
  const json rs_owner = kind == "ReplicaSet" && group == "apps" ? ControllerRef(*owner) : json();
  if (rs_owner.is_object() && rs_owner.value("kind", "") == "Deployment" &&
      GroupOf(rs_owner.value("apiVersion", "")) == "apps") {
    const json* d = store_.Find(StoreKey("apps", "deployments", ns, rs_owner.value("name", "")));
    if (d != nullptr && FieldValue(*d, "metadata.uid") == rs_owner.value("uid", "")) {
      return json{{"uid", FieldValue(*d, "metadata.uid")}, {"replicas", Replicas(*d)}};
    }
  }
  if (!HasScale(*type)) {
    return absl::FailedPreconditionError(absl::StrCat(QualifiedResource(group, type->plural),
                                                      " does not implement the scale subresource"));
  }
  return json{{"uid", FieldValue(*owner, "metadata.uid")}, {"replicas", Replicas(*owner)}};
}

absl::StatusOr<int64_t> ApiCore::ExpectedScale(const std::string& ns,
                                               const std::vector<json>& pods) {
  std::map<std::string, int64_t> scales;  // by controller uid
  std::set<std::string> seen;             // controllerRef uids already resolved
  for (const json& pod : pods) {
    const json ref = ControllerRef(pod);
    // Pods without a controller are left out of the count (upstream warns, "UnmanagedPods").
    if (!ref.is_object()) continue;
    if (!seen.insert(ref.value("uid", "")).second) continue;
    absl::StatusOr<json> scale = ControllerScale(ns, ref);
    if (!scale.ok()) return scale.status();
    if (scale->is_null()) {
      return absl::NotFoundError(
          absl::StrCat("found no controllers for pod \"", FieldValue(pod, "metadata.name"), "\""));
    }
    scales[(*scale)["uid"].get<std::string>()] = (*scale)["replicas"].get<int64_t>();
  }
  int64_t total = 0;
  for (const auto& [uid, n] : scales) total += n;
  return total;
}

absl::StatusOr<std::vector<json>> ApiCore::PodsOfBudget(const json& pdb) {
  std::vector<json> pods;
  const std::string ns = FieldValue(pdb, "metadata.namespace");
  for (const auto& [key, pod] : store_.Scan(StorePrefix("", "pods", ns, false))) {
    absl::StatusOr<bool> match = PdbSelectorMatches(pdb, *pod);
    if (!match.ok()) return match.status();
    if (*match) pods.push_back(*pod);
  }
  return pods;
}

namespace {

// desiredHealthy and expectedPods from spec.minAvailable / spec.maxUnavailable (upstream's
// getExpectedPodCount): a percentage, and maxUnavailable in any form, count against the scale of
// the pods' controllers; an integer minAvailable against the number of selected pods.
struct Expected {
  int64_t expected = 0;
  int64_t desired = 0;
};

// Upstream's countHealthyPods: Ready pods, except those being deleted or recently evicted.
int64_t CountHealthy(const std::vector<json>& pods, const json& disrupted) {
  int64_t healthy = 0;
  for (const json& pod : pods) {
    if (pod.contains("/metadata/deletionTimestamp"_json_pointer)) continue;
    if (disrupted.contains(FieldValue(pod, "metadata.name"))) continue;
    if (IsPodReady(pod)) ++healthy;
  }
  return healthy;
}

// Upstream's buildDisruptedPodMap: entries for pods that still exist, are not being deleted and
// were recorded less than the timeout ago.
json LiveDisruptions(const std::vector<json>& pods, const json& status) {
  const json recorded = status.value("disruptedPods", json::object());
  json out = json::object();
  if (!recorded.is_object()) return out;
  for (const json& pod : pods) {
    const std::string name = FieldValue(pod, "metadata.name");
    if (pod.contains("/metadata/deletionTimestamp"_json_pointer) || !recorded.contains(name)) {
      continue;
    }
    const json& when = recorded.at(name);
    if (!DisruptionExpired(when)) out[name] = when;
  }
  return out;
}

}  // namespace

json ApiCore::DisruptionStatus(const json& pdb) {
  json old = pdb.value("status", json::object());
  if (!old.is_object()) old = json::object();
  absl::StatusOr<std::vector<json>> pods = PodsOfBudget(pdb);
  Expected e;
  absl::Status failed = pods.status();
  const json spec = pdb.value("spec", json::object());
  const json max_unavailable = spec.is_object() ? spec.value("maxUnavailable", json()) : json();
  const json min_available = spec.is_object() ? spec.value("minAvailable", json()) : json();
  const bool by_scale = !max_unavailable.is_null() || min_available.is_string();
  if (failed.ok() && by_scale) {
    absl::StatusOr<int64_t> scale = ExpectedScale(FieldValue(pdb, "metadata.namespace"), *pods);
    absl::StatusOr<int64_t> v =
        scale.ok()
            ? ScaledValue(max_unavailable.is_null() ? min_available : max_unavailable, *scale)
            : absl::StatusOr<int64_t>(scale.status());
    failed = v.status();
    if (failed.ok() && !max_unavailable.is_null()) e = {*scale, std::max<int64_t>(0, *scale - *v)};
    if (failed.ok() && max_unavailable.is_null()) e = {*scale, *v};
  } else if (failed.ok() && !min_available.is_null()) {
    e = {static_cast<int64_t>(pods->size()), IntMember(spec, "minAvailable")};
  }
  json status = old;
  for (const char* k : {"disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"}) {
    status[k] = IntMember(old, k);
  }
  if (!failed.ok()) {  // upstream's failSafe: nothing else changes
    status["disruptionsAllowed"] = 0;
    SetCondition(status, {{"type", kDisruptionAllowed},
                          {"status", "False"},
                          {"observedGeneration", IntMember(old, "observedGeneration")},
                          {"lastTransitionTime", NowRfc3339()},
                          {"reason", kSyncFailed},
                          {"message", std::string(failed.message())}});
    return status;
  }
  const json disrupted = LiveDisruptions(*pods, old);
  const int64_t healthy = CountHealthy(*pods, disrupted);
  // A budget that expects no pods allows nothing (safe until the controller sees the first pods).
  const int64_t allowed = e.expected <= 0 ? 0 : std::max<int64_t>(0, healthy - e.desired);
  status["observedGeneration"] = pdb.value("/metadata/generation"_json_pointer, int64_t{0});
  status["currentHealthy"] = healthy;
  status["desiredHealthy"] = e.desired;
  status["expectedPods"] = e.expected;
  status["disruptionsAllowed"] = allowed;
  if (disrupted.empty()) {
    status.erase("disruptedPods");
  } else {
    status["disruptedPods"] = disrupted;
  }
  UpdateDisruptionAllowedCondition(status);
  return status;
}

void ApiCore::SyncDisruptionBudgets(bool force) {
  if (!force && pdb_synced_rv_ == store_.rv()) return;
  const ResourceType* type = registry_.Find("policy", "v1", "poddisruptionbudgets");
  if (type != nullptr) {
    std::vector<std::string> keys;
    for (const auto& [key, pdb] : store_.Scan(StorePrefix("policy", type->plural, "", true))) {
      keys.push_back(key);
    }
    for (const std::string& key : keys) {
      const json* found = store_.Find(key);
      if (found == nullptr) continue;
      const json pdb = *found;
      json next = pdb;
      next["status"] = DisruptionStatus(pdb);
      if (next["status"] == pdb.value("status", json())) continue;
      next["metadata"].erase("resourceVersion");
      ResourcePath rp;
      rp.type = *type;
      rp.ns = FieldValue(pdb, "metadata.namespace");
      rp.name = FieldValue(pdb, "metadata.name");
      try {
        UpdateObject(rp, pdb, next, WriteCtx{"kube-controller-manager", "Update", "status"}, false);
      } catch (const ApiError&) {
        // Not expected for a status write; upstream would retry later.
      }
    }
  }
  pdb_synced_rv_ = store_.rv();
}

}  // namespace neuron::fakes::apiserver
