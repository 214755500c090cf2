// File: tests/fakes/apiserver/api_evict.cc
// POST /api/v1/namespaces/{ns}/pods/{name}/eviction, as kube-apiserver's EvictionREST
// (pkg/registry/core/pod/storage/eviction.go) answers it:
// - 400 when the Eviction's name is not the URL's ("name in URL does not match name in Eviction
//   object") or its namespace is another; 422 for deleteOptions.
//   ignoreStoreReadErrorWithClusterBreakingPotential; 404 for an unknown pod.
// - A pod that is Succeeded, Failed, Pending or already being deleted is deleted without
//   consulting any budget.
// - Otherwise the PodDisruptionBudgets of the pod's namespace whose selector matches it: more
//   than one -> 500 "This pod has more than one PodDisruptionBudget, which the eviction
//   subresource does not support."; none -> delete; one -> an unready pod is deleted when the
//   budget has its desired healthy pods (or unhealthyPodEvictionPolicy is AlwaysAllow), else the
//   budget must allow a disruption: 429 TooManyRequests with a DisruptionBudget cause when it
//   does not; when it does, status.disruptionsAllowed is decremented and the pod recorded in
//   status.disruptedPods before the pod is deleted.
// - The pod deleted gets the DisruptionTarget condition first (reason EvictionByEvictionAPI);
//   deleteOptions.preconditions (uid, resourceVersion) apply, and propagationPolicy; dryRun=All
//   (query or deleteOptions.dryRun) writes nothing. Success is 201 with a Status
//   {"status":"Success","code":201}.
// Simplifications: no retries on conflicts (the fake's single lock makes them impossible except
// for client preconditions, which are answered 409 like upstream's non-retried case);
// gracePeriodSeconds is ignored as by every delete in the fake (pods go at once).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tests/fakes/apiserver/api_core.h"
#include "tests/fakes/apiserver/disruption.h"
#include "tests/fakes/apiserver/selectors.h"

namespace neuron::fakes::apiserver {
namespace {

constexpr char kViolation[] = "Cannot evict pod as it would violate the pod's disruption budget.";
// Upstream's MaxDisruptedPodSize.
constexpr size_t kMaxDisruptedPods = 2000;

ApiError TooManyRequests(const std::string& cause, int retry_after_s) {
  ApiError e{429, "TooManyRequests", kViolation, json::object(), retry_after_s};
  e.details["causes"] = json::array({{{"reason", "DisruptionBudget"}, {"message", cause}}});
  return e;
}

ApiError PdbForbidden(const std::string& pdb, const std::string& why) {
  return ApiError{403,
                  "Forbidden",
                  absl::StrCat("poddisruptionbudget.policy \"", pdb, "\" is forbidden: ", why),
                  {{"name", pdb}, {"group", "policy"}, {"kind", "poddisruptionbudget"}},
                  0};
}

json EvictionSuccess() {
  return {{"kind", "Status"},
          {"apiVersion", "v1"},
          {"metadata", json::object()},
          {"status", "Success"},
          {"code", 201}};
}

// The Eviction body, checked as the create handler and EvictionREST.Create check it.
json ParseEviction(const ResourcePath& rp, const HttpRequest& req) {
  json body = ParseBody(req);
  const std::string api_version = body.value("apiVersion", "");
  if (!api_version.empty() && api_version != "policy/v1" && api_version != "policy/v1beta1") {
    throw BadRequest(absl::StrCat("the API version in the data (", api_version,
                                  ") does not match the expected API version (policy/v1)"));
  }
  const std::string kind = body.value("kind", "");
  if (!kind.empty() && kind != "Eviction") {
    throw BadRequest(
        absl::StrCat("the object provided is unrecognized (must be of type "
                     "Eviction): kind \"",
                     kind, "\""));
  }
  const std::string ns = body.value("/metadata/namespace"_json_pointer, std::string());
  if (!ns.empty() && ns != rp.ns) {
    throw BadRequest(
        "the namespace of the provided object does not match the namespace sent on the request");
  }
  if (body.value("/metadata/name"_json_pointer, std::string()) != rp.name) {
    throw BadRequest("name in URL does not match name in Eviction object");
  }
  json opts = body.value("deleteOptions", json::object());
  if (opts.is_null()) opts = json::object();
  if (!opts.is_object()) throw BadRequest("deleteOptions must be an object");
  if (opts.value("ignoreStoreReadErrorWithClusterBreakingPotential", false) == true) {
    throw Invalid("policy", "Eviction", rp.name,
                  "deleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: "
                  "true: can not be set for pod eviction, try after removing the option");
  }
  body["deleteOptions"] = opts;
  return body;
}

bool DryRun(const HttpRequest& req, const json& opts) {
  if (req.Param("dryRun") == "All") return true;
  const json d = opts.value("dryRun", json::array());
  return d.is_array() && std::find(d.begin(), d.end(), json("All")) != d.end();
}

// Upstream's canIgnorePDB.
bool CanIgnoreBudget(const json& pod) {
  const std::string phase = FieldValue(pod, "status.phase");
  return phase == "Succeeded" || phase == "Failed" || phase == "Pending" ||
         pod.contains("/metadata/deletionTimestamp"_json_pointer);
}

// An unready pod may go without using up the budget when the budget says so, or when the
// application has its desired healthy pods anyway.
bool UnhealthyPodMayGo(const json& pdb, const json& pod) {
  if (IsPodReady(pod)) return false;
  if (pdb.value("/spec/unhealthyPodEvictionPolicy"_json_pointer, std::string()) == "AlwaysAllow") {
    return true;
  }
  const json status = pdb.value("status", json::object());
  const int64_t desired = IntMember(status, "desiredHealthy");
  return IntMember(status, "currentHealthy") >= desired && desired > 0;
}

// The 429 cause, chosen as upstream's checkAndDecrement chooses it.
std::string BudgetCause(const json& pdb) {
  const std::string name = FieldValue(pdb, "metadata.name");
  const json status = pdb.value("status", json::object());
  const json cond = FindCondition(status, kDisruptionAllowed);
  const bool cond_false =
      cond.is_object() && cond.value("status", "") == "False" && !cond.value("message", "").empty();
  const int64_t current = IntMember(status, "currentHealthy");
  const int64_t desired = IntMember(status, "desiredHealthy");
  if (cond_false && cond.value("reason", "") == kSyncFailed) {
    return absl::StrCat("The disruption budget ", name,
                        " does not allow evicting pods currently because it failed sync: ",
                        cond.value("message", ""));
  }
  if (current <= desired) {
    return absl::StrCat("The disruption budget ", name, " needs ", desired,
                        " healthy pods and has ", current, " currently");
  }
  if (cond_false) {
    return absl::StrCat("The disruption budget ", name, " does not allow evicting pods currently (",
                        cond.value("reason", ""), "): ", cond.value("message", ""));
  }
  return absl::StrCat("The disruption budget ", name, " does not allow evicting pods currently");
}

// deleteOptions.preconditions against the pod, with upstream's eviction wording.
void CheckPreconditions(const json& pod, const json& opts) {
  const json pre = opts.value("preconditions", json::object());
  if (!pre.is_object()) return;
  const std::string name = FieldValue(pod, "metadata.name");
  const std::string uid = FieldValue(pod, "metadata.uid");
  const std::string want_uid = pre.value("uid", json("")).is_string() ? pre.value("uid", "") : "";
  if (!want_uid.empty() && want_uid != uid) {
    throw Conflict("", "Pod", name,
                   absl::StrCat("the UID in the precondition (", want_uid,
                                ") does not match the UID in record (", uid,
                                "). The object might have been deleted and then recreated"));
  }
  const std::string rv = FieldValue(pod, "metadata.resourceVersion");
  const std::string want_rv =
      pre.value("resourceVersion", json("")).is_string() ? pre.value("resourceVersion", "") : "";
  if (!want_rv.empty() && want_rv != rv) {
    throw Conflict("", "Pod", name,
                   absl::StrCat("the ResourceVersion in the precondition (", want_rv,
                                ") does not match the ResourceVersion in record (", rv,
                                "). The object might have been modified"));
  }
}

}  // namespace

std::vector<json> ApiCore::BudgetsOfPod(const json& pod) {
  std::vector<json> out;
  const std::string ns = FieldValue(pod, "metadata.namespace");
  for (const auto& [key, pdb] :
       store_.Scan(StorePrefix("policy", "poddisruptionbudgets", ns, false))) {
    if (PdbSelectsPod(*pdb, pod)) out.push_back(*pdb);
  }
  return out;
}

void ApiCore::CheckAndDecrement(const json& pdb, const std::string& pod, bool dry_run) {
  const std::string name = FieldValue(pdb, "metadata.name");
  json status = pdb.value("status", json::object());
  if (!status.is_object()) status = json::object();
  if (IntMember(status, "observedGeneration") <
      pdb.value("/metadata/generation"_json_pointer, int64_t{0})) {
    throw TooManyRequests(
        absl::StrCat("The disruption budget ", name, " is still being processed by the server."),
        10);
  }
  const int64_t allowed = IntMember(status, "disruptionsAllowed");
  if (allowed < 0) throw PdbForbidden(name, "pdb disruptions allowed is negative");
  const json disrupted = status.value("disruptedPods", json::object());
  if (disrupted.is_object() && disrupted.size() > kMaxDisruptedPods) {
    throw PdbForbidden(
        name, "DisruptedPods map too big - too many evictions not confirmed by PDB controller");
  }
  if (allowed == 0) throw TooManyRequests(BudgetCause(pdb), 0);
  status["disruptionsAllowed"] = allowed - 1;
  if (allowed - 1 == 0) UpdateDisruptionAllowedCondition(status);
  if (dry_run) return;
  if (!status.contains("disruptedPods") || !status["disruptedPods"].is_object()) {
    status["disruptedPods"] = json::object();
  }
  status["disruptedPods"][pod] = NowRfc3339();
  const ResourceType* type = registry_.Find("policy", "v1", "poddisruptionbudgets");
  if (type == nullptr) throw MakeError(500, "policy/v1 PodDisruptionBudgets are not served");
  ResourcePath rp;
  rp.type = *type;
  rp.ns = FieldValue(pdb, "metadata.namespace");
  rp.name = name;
  json next = pdb;
  next["status"] = std::move(status);
  UpdateObject(rp, pdb, std::move(next), WriteCtx{"kube-apiserver", "Update", "status"}, false);
}

HttpResponse ApiCore::Evict(const ResourcePath& rp, const HttpRequest& req) {
  const json eviction = ParseEviction(rp, req);
  const json& opts = eviction.at("deleteOptions");
  const bool dry_run = DryRun(req, opts);
  const std::string policy = PropagationPolicy(opts);
  SyncDisruptionBudgets(true);  // what the disruption controller would have written by now
  const json* found = store_.Find(rp.Key());
  if (found == nullptr) throw NotFound(rp.type.group, rp.type.plural, rp.name);
  const json pod = *found;
  if (!CanIgnoreBudget(pod)) {
    const std::vector<json> budgets = BudgetsOfPod(pod);
    if (budgets.size() > 1) {
      // Upstream returns this Status as the result (not as an error): no reason.
      throw ApiError{500, "",
                     "This pod has more than one PodDisruptionBudget, which the eviction "
                     "subresource does not support.",
                     nullptr, 0};
    }
    if (budgets.size() == 1 && !UnhealthyPodMayGo(budgets[0], pod)) {
      CheckAndDecrement(budgets[0], rp.name, dry_run);
    }
  }
  CheckPreconditions(pod, opts);
  if (dry_run) return HttpResponse{201, EvictionSuccess(), {}};
  json next = pod;
  json status = next.value("status", json::object());
  if (!status.is_object()) status = json::object();
  SetCondition(status, {{"type", "DisruptionTarget"},
                        {"status", "True"},
                        {"lastTransitionTime", NowRfc3339()},
                        {"reason", "EvictionByEvictionAPI"},
                        {"message", "Eviction API: evicting"}});
  next["status"] = std::move(status);
  next["metadata"].erase("resourceVersion");
  UpdateObject(rp, pod, std::move(next), WriteCtx{"kube-apiserver", "Update", "status"}, false);
  bool removed = false;
  DeleteObject(rp.Key(), policy, &removed);
  return HttpResponse{201, EvictionSuccess(), {}};
}

}  // namespace neuron::fakes::apiserver
