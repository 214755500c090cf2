// File: tests/fakes/apiserver/api_write.cc
// Create, update (PUT/PATCH, main resource and status), binding. Deletion: api_delete.cc.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/fakes/apiserver/api_core.h"
#include "tests/fakes/apiserver/managed_fields.h"
#include "tests/fakes/apiserver/patch.h"
#include "tests/fakes/apiserver/protobuf_body.h"
#include "tests/fakes/apiserver/schema_required.h"
#include "tests/fakes/apiserver/selectors.h"

namespace neuron::fakes::apiserver {
namespace {

// Upstream derives a default field manager from the User-Agent ("kubectl/v1.32 ..." -> "kubectl").
std::string Manager(const HttpRequest& req) {
  std::string m = req.Param("fieldManager");
  if (m.empty()) m = req.user_agent.substr(0, req.user_agent.find('/'));
  return m.empty() ? "unknown" : m;
}

json WithoutMetaAndStatus(json o) {
  o.erase("metadata");
  o.erase("status");
  o.erase("apiVersion");
  o.erase("kind");
  return o;
}

bool IsCrdType(const ResourceType& t) {
  return t.group == "apiextensions.k8s.io" && t.plural == "customresourcedefinitions";
}

// Most object names must be DNS-1123 subdomains (lowercase alphanumerics, '-' and '.', starting
// and ending alphanumeric, at most 253 characters). Upstream applies stricter per-kind rules
// (e.g. DNS-1123 labels for namespaces and services); this fake checks the common one.
bool IsDns1123Subdomain(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char c : name) {
    if (!alnum(c) && c != '-' && c != '.') return false;
  }
  return true;
}

}  // namespace

json ParseBody(const HttpRequest& req) {
  if (MediaType(req.content_type) == kProtobufMediaType) {
    absl::StatusOr<json> obj = DecodeProtobufObject(req.body);
    if (absl::IsUnimplemented(obj.status())) {
      throw ApiError{415, "UnsupportedMediaType", std::string(obj.status().message()), nullptr, 0};
    }
    if (!obj.ok()) throw BadRequest(std::string(obj.status().message()));
    return *std::move(obj);
  }
  json j = json::parse(req.body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    // JSON from clients; YAML too for hand-written curl requests.
    auto y = ParseJsonOrYaml(req.body);
    if (!y.ok() || !y->is_object()) throw BadRequest("the request body is not a valid object");
    return *y;
  }
  return j;
}

void ApiCore::CheckBody(const ResourcePath& rp, json& obj, bool need_name) {
  if (!obj.is_object()) throw BadRequest("the request body is not an object");
  if (obj.contains("kind") && obj["kind"] != rp.type.kind && obj["kind"] != "") {
    throw BadRequest(absl::StrCat("the kind in the data (", obj["kind"].dump(),
                                  ") does not match the expected kind (", rp.type.kind, ")"));
  }
  if (obj.contains("apiVersion") && obj["apiVersion"].is_string()) {
    const std::string av = obj["apiVersion"].get<std::string>();
    const std::string g = av.find('/') == std::string::npos ? "" : av.substr(0, av.find('/'));
    if (g != rp.type.group) {
      throw BadRequest(absl::StrCat("the API version in the data (", av,
                                    ") does not match the expected API version (",
                                    rp.type.ApiVersion(), ")"));
    }
  }
  obj["apiVersion"] = rp.type.ApiVersion();
  obj["kind"] = rp.type.kind;
  if (!obj.contains("metadata") || !obj["metadata"].is_object()) obj["metadata"] = json::object();
  json& md = obj["metadata"];
  if (rp.type.namespaced) {
    const std::string ns = md.value("namespace", "");
    if (!ns.empty() && ns != rp.ns) {
      throw BadRequest(
          "the namespace of the provided object does not match the namespace sent on the request");
    }
    md["namespace"] = rp.ns;
  } else {
    md.erase("namespace");
  }
  if (need_name || !rp.name.empty()) {
    const std::string name = md.value("name", "");
    if (name.empty()) {
      md["name"] = rp.name;
    } else if (name != rp.name) {
      throw BadRequest(absl::StrCat("the name of the object (", name,
                                    ") does not match the name on the URL (", rp.name, ")"));
    }
  }
}

namespace {
// A custom resource is validated against the schema of the version it is written at (which is
// why a v1beta1-shaped object can be refused through v1alpha1, and read back through either).
void CheckRequired(const ResourceType& type, const std::string& name, const json& obj,
                   const json* old = nullptr) {
  const std::vector<std::string> missing = MissingRequired(type.schema, obj, old);
  if (!missing.empty()) throw Invalid(type.group, type.kind, name, absl::StrJoin(missing, ", "));
}
}  // namespace

json ApiCore::CreateObject(const ResourcePath& rp_in, json obj, const WriteCtx& ctx, bool dry_run) {
  ResourcePath rp = rp_in;
  CheckBody(rp, obj, false);
  json& md = obj["metadata"];
  std::string name = md.value("name", "");
  if (name.empty() && md.contains("generateName") && md["generateName"].is_string()) {
    const std::string base = md["generateName"].get<std::string>();
    do {
      name = base + RandomSuffix(5);
    } while (store_.Find(StoreKey(rp.type.group, rp.type.plural, rp.ns, name)) != nullptr);
    md["name"] = name;
  }
  if (name.empty()) {
    throw Invalid(rp.type.group, rp.type.kind, "",
                  "metadata.name: Required value: name or generateName is required");
  }
  if (!IsDns1123Subdomain(name)) {
    throw Invalid(rp.type.group, rp.type.kind, name,
                  absl::StrCat("metadata.name: Invalid value: \"", name,
                               "\": a lowercase RFC 1123 subdomain must consist of lower case "
                               "alphanumeric characters, '-' or '.', and must start and end with "
                               "an alphanumeric character"));
  }
  rp.name = name;
  const std::string key = rp.Key();
  if (store_.Find(key) != nullptr) throw AlreadyExists(rp.type.group, rp.type.plural, name);
  md["uid"] = NewUid();
  md["creationTimestamp"] = NowRfc3339();
  // Simplification: every type gets generation 1 on create (upstream leaves it unset for some
  // built-ins such as ConfigMaps).
  md["generation"] = 1;
  for (const char* k :
       {"deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion", "selfLink"}) {
    md.erase(k);
  }
  // Upstream: custom resources drop .status on create when the status subresource is enabled;
  // built-ins mostly keep or default it. We keep it for built-ins (so tests can seed e.g. node
  // capacity) and default pod phase / namespace phase.
  if (!rp.type.crd_name.empty() && rp.type.has_status) obj.erase("status");
  if (rp.type.group.empty() && rp.type.plural == "pods" &&
      FieldValue(obj, "status.phase").empty()) {
    obj["status"]["phase"] = "Pending";
  }
  // Upstream's defaulting (pkg/apis/core/v1/defaults.go): a pod without a scheduler is the
  // default scheduler's.
  if (rp.type.group.empty() && rp.type.plural == "pods" && obj.contains("spec") &&
      obj["spec"].is_object() && FieldValue(obj, "spec.schedulerName").empty()) {
    obj["spec"]["schedulerName"] = "default-scheduler";
  }
  if (rp.type.group.empty() && rp.type.plural == "namespaces") obj["status"]["phase"] = "Active";
  if (IsCrdType(rp.type)) {
    Registry probe = registry_;
    if (absl::Status s = probe.RegisterCrd(obj); !s.ok()) {
      throw Invalid(rp.type.group, rp.type.kind, name, std::string(s.message()));
    }
    MarkCrdEstablished(obj);
  }
  CheckRequired(rp.type, name, obj);
  if (ctx.operation == "Update") {
    md.erase("managedFields");
    TrackUpdate(nullptr, obj, {ctx.manager, "Update", "", rp.type.ApiVersion()});
  }
  if (dry_run) return obj;
  if (IsCrdType(rp.type)) (void)registry_.RegisterCrd(obj);
  json stored = store_.Put(key, std::move(obj));
  cv_.notify_all();
  if (rp.type.group.empty() && rp.type.plural == "namespaces") PublishRootCa(name);
  return stored;
}

json ApiCore::UpdateObject(const ResourcePath& rp, const json& old_ref, json obj,
                           const WriteCtx& ctx, bool dry_run) {
  const json old = old_ref;  // the store may overwrite old_ref below
  CheckBody(rp, obj, true);
  const std::string want_rv = obj["metadata"].value("resourceVersion", "");
  const std::string have_rv = old["metadata"].value("resourceVersion", "");
  if (!want_rv.empty() && want_rv != have_rv) {
    throw Conflict(rp.type.group, rp.type.plural, rp.name,
                   "the object has been modified; please apply your changes to the latest "
                   "version and try again");
  }
  json next;
  if (ctx.subresource == "status") {
    // Simplification: a status write changes only .status (upstream also lets some metadata
    // through for some types).
    next = old;
    if (obj.contains("status")) {
      next["status"] = obj["status"];
    } else {
      next.erase("status");
    }
    if (ctx.operation == "Apply") {
      next["metadata"]["managedFields"] = obj["metadata"]["managedFields"];
    }
  } else {
    next = std::move(obj);
    if (rp.type.has_status) {
      if (old.contains("status")) {
        next["status"] = old["status"];
      } else {
        next.erase("status");
      }
    }
  }
  json& md = next["metadata"];
  for (const char* k : {"uid", "creationTimestamp", "deletionTimestamp",
                        "deletionGracePeriodSeconds", "generation"}) {
    if (old["metadata"].contains(k)) {
      md[k] = old["metadata"][k];
    } else {
      md.erase(k);
    }
  }
  md["resourceVersion"] = have_rv;
  if (ctx.operation == "Update") {
    // Simplification: client-supplied managedFields are ignored on update.
    if (old["metadata"].contains("managedFields")) {
      md["managedFields"] = old["metadata"]["managedFields"];
    } else {
      md.erase("managedFields");
    }
    TrackUpdate(old, next, {ctx.manager, "Update", ctx.subresource, rp.type.ApiVersion()});
  }
  if (WithoutMetaAndStatus(next) != WithoutMetaAndStatus(old)) {
    next["metadata"]["generation"] = old["metadata"].value("generation", 0) + 1;
  }
  if (IsCrdType(rp.type) && ctx.subresource.empty()) {
    Registry probe = registry_;
    if (absl::Status s = probe.RegisterCrd(next); !s.ok()) {
      throw Invalid(rp.type.group, rp.type.kind, rp.name, std::string(s.message()));
    }
    MarkCrdEstablished(next);
  }
  CheckRequired(rp.type, rp.name, next, &old);
  auto strip_times = [](json o) {
    if (o["metadata"].contains("managedFields")) {
      for (auto& e : o["metadata"]["managedFields"]) e.erase("time");
    }
    return o;
  };
  // Upstream does not write (nor bump resourceVersion) when an update changes nothing.
  if (strip_times(next) == strip_times(old) || dry_run) return next;
  const bool finalized = next["metadata"].contains("deletionTimestamp") &&
                         next["metadata"].value("finalizers", json::array()).empty();
  if (IsCrdType(rp.type) && !finalized) (void)registry_.RegisterCrd(next);
  json stored = store_.Put(rp.Key(), std::move(next));
  cv_.notify_all();
  if (finalized) RemoveAndCollect(rp.Key(), "Background");
  return stored;
}

HttpResponse ApiCore::Create(const ResourcePath& rp, const HttpRequest& req) {
  json body = ParseBody(req);
  json obj = CreateObject(rp, std::move(body), WriteCtx{Manager(req), "Update", ""},
                          req.Param("dryRun") == "All");
  return HttpResponse{201, rp.type.Present(std::move(obj)), {}};
}

HttpResponse ApiCore::Replace(const ResourcePath& rp, const HttpRequest& req) {
  json body = ParseBody(req);
  const json* old = store_.Find(rp.Key());
  // Simplification: PUT never creates (upstream allows create-on-update for a few types).
  if (old == nullptr) throw NotFound(rp.type.group, rp.type.plural, rp.name);
  WriteCtx ctx{Manager(req), "Update", rp.subresource};
  json obj = UpdateObject(rp, *old, std::move(body), ctx, req.Param("dryRun") == "All");
  return HttpResponse{200, rp.type.Present(std::move(obj)), {}};
}

HttpResponse ApiCore::Patch(const ResourcePath& rp, const HttpRequest& req) {
  const std::string mt = MediaType(req.content_type);
  const bool apply = mt == "application/apply-patch+yaml" || mt == "application/apply-patch+json";
  const bool dry_run = req.Param("dryRun") == "All";
  if (!apply && !req.Param("force").empty()) {
    throw Invalid("meta.k8s.io", "PatchOptions", "",
                  "force: Forbidden: may not be specified for non-apply patch");
  }
  const json* old = store_.Find(rp.Key());
  if (apply) {
    if (req.Param("fieldManager").empty()) {
      throw Invalid("meta.k8s.io", "PatchOptions", "",
                    "fieldManager: Required value: is required for apply patch");
    }
    auto applied = ParseJsonOrYaml(req.body);
    if (!applied.ok() || !applied->is_object()) throw BadRequest("invalid apply patch body");
    if (!applied->contains("apiVersion") || !applied->contains("kind")) {
      throw BadRequest("apiVersion and kind must be set in the applied configuration");
    }
    CheckBody(rp, *applied, true);
    FieldOwner who{req.Param("fieldManager"), "Apply", rp.subresource, rp.type.ApiVersion()};
    const bool force = req.Flag("force");
    WriteCtx ctx{who.manager, "Apply", rp.subresource};
    if (old == nullptr) {
      if (!rp.subresource.empty()) throw NotFound(rp.type.group, rp.type.plural, rp.name);
      json skeleton = {{"apiVersion", rp.type.ApiVersion()},
                       {"kind", rp.type.kind},
                       {"metadata", (*applied)["metadata"]}};
      skeleton["metadata"].erase("labels");
      skeleton["metadata"].erase("annotations");
      json merged =
          ServerSideApply(skeleton, *applied, who, force, rp.type.group, rp.type.plural, rp.name);
      json obj = CreateObject(rp, std::move(merged), ctx, dry_run);
      return HttpResponse{201, rp.type.Present(std::move(obj)), {}};
    }
    const json current = *old;
    json merged =
        ServerSideApply(current, *applied, who, force, rp.type.group, rp.type.plural, rp.name);
    json obj = UpdateObject(rp, current, std::move(merged), ctx, dry_run);
    return HttpResponse{200, rp.type.Present(std::move(obj)), {}};
  }
  if (old == nullptr) throw NotFound(rp.type.group, rp.type.plural, rp.name);
  const json current = *old;
  json patch = json::parse(req.body, nullptr, false);
  if (patch.is_discarded()) throw BadRequest("the patch body is not valid JSON");
  json patched;
  if (mt == "application/merge-patch+json") {
    patched = MergePatch(current, patch);
  } else if (mt == "application/strategic-merge-patch+json") {
    if (!rp.type.crd_name.empty()) {
      throw ApiError{415, "UnsupportedMediaType",
                     "the body of the request was in an unknown format - accepted media types "
                     "include: application/json-patch+json, application/merge-patch+json, "
                     "application/apply-patch+yaml",
                     nullptr, 0};
    }
    patched = StrategicMergePatch(current, patch);
  } else if (mt == "application/json-patch+json") {
    auto r = JsonPatch(current, patch);
    if (!r.ok()) throw MakeError(422, std::string(r.status().message()));
    patched = *std::move(r);
  } else {
    throw ApiError{415, "UnsupportedMediaType",
                   "the body of the request was in an unknown format - accepted media types "
                   "include: application/json-patch+json, application/merge-patch+json, "
                   "application/apply-patch+yaml, application/strategic-merge-patch+json",
                   nullptr, 0};
  }
  if (!patched.is_object()) throw MakeError(422, "the patch produced a non-object");
  WriteCtx ctx{Manager(req), "Update", rp.subresource};
  json obj = UpdateObject(rp, current, std::move(patched), ctx, dry_run);
  return HttpResponse{200, rp.type.Present(std::move(obj)), {}};
}

// As the real BindingREST (pkg/registry/core/pod/storage): the Binding's name must be the
// pod's; its metadata.uid and resourceVersion, when set, are preconditions on the pod; a pod
// that is bound, being deleted or gated is refused with 409; the Binding's annotations are
// merged into the pod's key by key in the same write that sets nodeName.
HttpResponse ApiCore::Bind(const ResourcePath& rp, const HttpRequest& req) {
  json body = ParseBody(req);
  const std::string node = body.value("/target/name"_json_pointer, std::string());
  if (node.empty()) throw Invalid("", "Binding", rp.name, "target.name: Required value");
  const std::string kind = body.value("/target/kind"_json_pointer, std::string());
  if (!kind.empty() && kind != "Node") {
    throw Invalid("", "Binding", rp.name, "target.kind: Invalid value: must be empty or 'Node'");
  }
  if (body.value("/metadata/name"_json_pointer, rp.name) != rp.name) {
    throw BadRequest("name in URL does not match name in Binding object");
  }
  const json* pod = store_.Find(rp.Key());
  if (pod == nullptr) throw NotFound(rp.type.group, rp.type.plural, rp.name);
  auto refuse = [&](const std::string& why) {
    return Conflict(rp.type.group, "pods/binding", rp.name, why);
  };
  const std::string want_uid = body.value("/metadata/uid"_json_pointer, std::string());
  const std::string uid = FieldValue(*pod, "metadata.uid");
  if (!want_uid.empty() && want_uid != uid) {
    throw refuse(absl::StrCat("Precondition failed: UID in precondition: ", want_uid,
                              ", UID in object meta: ", uid));
  }
  const std::string want_rv = body.value("/metadata/resourceVersion"_json_pointer, std::string());
  if (!want_rv.empty() && want_rv != FieldValue(*pod, "metadata.resourceVersion")) {
    throw refuse(
        "the object has been modified; please apply your changes to the latest version "
        "and try again");
  }
  if (pod->contains("metadata") && (*pod)["metadata"].contains("deletionTimestamp")) {
    throw refuse(absl::StrCat("pod ", rp.name, " is being deleted, cannot be assigned to a host"));
  }
  const std::string bound = FieldValue(*pod, "spec.nodeName");
  if (!bound.empty()) {
    throw refuse(absl::StrCat("pod ", rp.name, " is already assigned to node \"", bound, "\""));
  }
  const json gates = pod->value("/spec/schedulingGates"_json_pointer, json::array());
  if (gates.is_array() && !gates.empty()) {
    throw refuse(absl::StrCat("pod ", rp.name, " has non-empty .spec.schedulingGates"));
  }
  json next = *pod;
  next["spec"]["nodeName"] = node;
  const json annotations = body.value("/metadata/annotations"_json_pointer, json::object());
  if (!annotations.is_object()) {
    throw BadRequest("metadata.annotations: must be a map of strings");
  }
  for (const auto& [key, value] : annotations.items()) {
    if (!value.is_string()) throw BadRequest("metadata.annotations: must be a map of strings");
    next["metadata"]["annotations"][key] = value;
  }
  json cond = {{"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", NowRfc3339()}};
  if (!next.contains("status") || !next["status"].is_object()) next["status"] = json::object();
  json conds = next["status"].value("conditions", json::array());
  json kept = json::array();
  for (const json& c : conds) {
    if (!c.is_object() || c.value("type", "") != "PodScheduled") kept.push_back(c);
  }
  conds = kept;
  conds.push_back(cond);
  next["status"]["conditions"] = conds;
  store_.Put(rp.Key(), std::move(next));
  cv_.notify_all();
  return HttpResponse{201,
                      {{"kind", "Status"},
                       {"apiVersion", "v1"},
                       {"metadata", json::object()},
                       {"status", "Success"},
                       {"code", 201}},
                      {}};
}

}  // namespace neuron::fakes::apiserver
