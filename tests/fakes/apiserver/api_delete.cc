// File: tests/fakes/apiserver/api_delete.cc
// DELETE (item and collection), finalizers, ownerReference garbage collection, and the cascades
// of deleting a Namespace or a CustomResourceDefinition.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/fakes/apiserver/api_core.h"
#include "tests/fakes/apiserver/selectors.h"

namespace neuron::fakes::apiserver {
namespace {

json DeleteOptions(const HttpRequest& req) {
  json opts = json::object();
  if (!req.body.empty()) {
    opts = json::parse(req.body, nullptr, false);
    if (opts.is_discarded() || !opts.is_object()) throw BadRequest("invalid DeleteOptions body");
  }
  if (!req.Param("propagationPolicy").empty()) {
    opts["propagationPolicy"] = req.Param("propagationPolicy");
  }
  if (req.Param("orphanDependents") == "true" && !opts.contains("propagationPolicy")) {
    opts["propagationPolicy"] = "Orphan";
  }
  return opts;
}

json SuccessStatus(const ResourceType& t, const json& obj) {
  json details = {{"name", obj.value("/metadata/name"_json_pointer, std::string())},
                  {"kind", t.plural},
                  {"uid", obj.value("/metadata/uid"_json_pointer, std::string())}};
  if (!t.group.empty()) details["group"] = t.group;
  return {{"kind", "Status"},
          {"apiVersion", "v1"},
          {"metadata", json::object()},
          {"status", "Success"},
          {"details", details}};
}

bool HasOwner(const json& obj, const std::string& uid) {
  for (const json& r : obj.value("/metadata/ownerReferences"_json_pointer, json::array())) {
    if (r.is_object() && r.value("uid", "") == uid) return true;
  }
  return false;
}

}  // namespace

std::string PropagationPolicy(const json& opts) {
  const std::string p = opts.value("propagationPolicy", "Background");
  if (p != "Background" && p != "Foreground" && p != "Orphan") {
    throw Invalid("meta.k8s.io", "DeleteOptions", "",
                  "propagationPolicy: Unsupported value: \"" + p + "\"");
  }
  return p;
}

HttpResponse ApiCore::Delete(const ResourcePath& rp, const HttpRequest& req) {
  const json opts = DeleteOptions(req);
  const std::string policy = PropagationPolicy(opts);
  const json* found = store_.Find(rp.Key());
  if (found == nullptr) throw NotFound(rp.type.group, rp.type.plural, rp.name);
  const json obj = *found;
  const json pre = opts.value("preconditions", json::object());
  const std::string uid = obj["metadata"].value("uid", "");
  const std::string rv = obj["metadata"].value("resourceVersion", "");
  if (pre.is_object() && pre.contains("uid") && pre["uid"].is_string() && pre["uid"] != uid) {
    throw Conflict(rp.type.group, rp.type.plural, rp.name,
                   absl::StrCat("Precondition failed: UID in precondition: ",
                                pre["uid"].get<std::string>(), ", UID in object meta: ", uid));
  }
  if (pre.is_object() && pre.contains("resourceVersion") && pre["resourceVersion"].is_string() &&
      pre["resourceVersion"] != rv) {
    throw Conflict(rp.type.group, rp.type.plural, rp.name,
                   absl::StrCat("Precondition failed: ResourceVersion in precondition: ",
                                pre["resourceVersion"].get<std::string>(),
                                ", ResourceVersion in object meta: ", rv));
  }
  if (req.Param("dryRun") == "All") return HttpResponse{200, obj, {}};
  bool removed = false;
  json out = DeleteObject(rp.Key(), policy, &removed);
  // Upstream answers a completed deletion with a Status for most types and with the object while
  // finalizers hold it.
  if (removed) return HttpResponse{200, SuccessStatus(rp.type, out), {}};
  out["apiVersion"] = rp.type.ApiVersion();
  out["kind"] = rp.type.kind;
  return HttpResponse{200, out, {}};
}

HttpResponse ApiCore::DeleteCollection(const ResourcePath& rp, const HttpRequest& req) {
  const std::string policy = PropagationPolicy(DeleteOptions(req));
  auto labels = LabelSelector::Parse(req.Param("labelSelector"));
  if (!labels.ok()) throw BadRequest(std::string(labels.status().message()));
  auto fields = FieldSelector::Parse(req.Param("fieldSelector"), rp.type.field_labels);
  if (!fields.ok()) throw BadRequest(std::string(fields.status().message()));
  std::vector<std::string> keys;
  for (const auto& [key, obj] :
       store_.Scan(StorePrefix(rp.type.group, rp.type.plural, rp.ns, rp.all_namespaces))) {
    if (labels->Matches(obj->value("/metadata/labels"_json_pointer, json(nullptr))) &&
        fields->Matches(*obj)) {
      keys.push_back(key);
    }
  }
  json items = json::array();
  for (const auto& key : keys) {
    if (store_.Find(key) == nullptr) continue;  // collected by an earlier deletion
    bool removed = false;
    json o = DeleteObject(key, policy, &removed);
    o["apiVersion"] = rp.type.ApiVersion();
    o["kind"] = rp.type.kind;
    items.push_back(o);
  }
  return HttpResponse{200,
                      {{"kind", rp.type.ListKind()},
                       {"apiVersion", rp.type.ApiVersion()},
                       {"metadata", {{"resourceVersion", std::to_string(store_.rv())}}},
                       {"items", items}},
                      {}};
}

json ApiCore::DeleteObject(const std::string& key, const std::string& policy, bool* removed) {
  *removed = false;
  const json* found = store_.Find(key);
  if (found == nullptr) return nullptr;
  json obj = *found;
  const json finalizers = obj["metadata"].value("finalizers", json::array());
  // Simplification: pods have no kubelet here, so graceful deletion is immediate (grace 0), and
  // Foreground propagation deletes dependents right after the owner instead of before it.
  if (finalizers.is_array() && !finalizers.empty()) {
    if (!obj["metadata"].contains("deletionTimestamp")) {
      obj["metadata"]["deletionTimestamp"] = NowRfc3339();
      obj["metadata"]["deletionGracePeriodSeconds"] = 0;
      obj = store_.Put(key, std::move(obj));
      cv_.notify_all();
      // Simplification: orphaning happens at DELETE time (upstream uses the "orphan" finalizer
      // and orphans when the GC processes it).
      if (policy == "Orphan") OnRemoved(obj, "", "Orphan");
    }
    return obj;
  }
  RemoveAndCollect(key, policy);
  *removed = true;
  return obj;
}

void ApiCore::RemoveAndCollect(const std::string& key, const std::string& policy) {
  json obj = store_.Remove(key);
  if (obj.is_null()) return;
  cv_.notify_all();
  OnRemoved(obj, key, policy);
  RepublishRootCa(key);
}

void ApiCore::OnRemoved(const json& obj, const std::string& key, const std::string& policy) {
  const std::vector<std::string> parts = absl::StrSplit(key, '/');
  const std::string name = obj["metadata"].value("name", "");
  // Deleting a CRD removes its type and every custom resource of it.
  if (!key.empty() && parts[0] == "apiextensions.k8s.io" &&
      parts[1] == "customresourcedefinitions") {
    registry_.UnregisterCrd(name);
    const std::string group = obj.value("/spec/group"_json_pointer, std::string());
    const std::string plural = obj.value("/spec/names/plural"_json_pointer, std::string());
    std::vector<std::string> keys;
    for (const auto& [k, o] : store_.Scan(StorePrefix(group, plural, "", true))) keys.push_back(k);
    for (const auto& k : keys) RemoveAndCollect(k, "Background");
  }
  // Simplification: deleting a Namespace removes everything in it at once, ignoring the
  // contained objects' finalizers (upstream's namespace controller waits for them).
  if (!key.empty() && parts[0].empty() && parts[1] == "namespaces") {
    std::vector<std::string> keys;
    for (const auto& [k, o] : store_.objects()) {
      const std::vector<std::string> kp = absl::StrSplit(k, '/');
      if (kp.size() == 4 && kp[2] == name) keys.push_back(k);
    }
    for (const auto& k : keys) RemoveAndCollect(k, "Background");
  }
  // Garbage collection of dependents. Simplification: synchronous, and a dependent is deleted
  // as soon as none of its remaining owners exists (upstream checks via the GC graph, async).
  const std::string uid = obj["metadata"].value("uid", "");
  if (uid.empty()) return;
  std::vector<std::string> dependents;
  for (const auto& [k, o] : store_.objects()) {
    if (HasOwner(o, uid)) dependents.push_back(k);
  }
  for (const auto& dk : dependents) {
    const json* d = store_.Find(dk);
    if (d == nullptr || !HasOwner(*d, uid)) continue;
    json dep = *d;
    json refs = json::array();
    for (const json& r : dep["metadata"]["ownerReferences"]) {
      if (r.value("uid", "") != uid) refs.push_back(r);
    }
    bool other_owner_alive = false;
    for (const json& r : refs) {
      const std::string ouid = r.value("uid", "");
      for (const auto& [k2, o2] : store_.objects()) {
        if (o2["metadata"].value("uid", "") == ouid) other_owner_alive = true;
      }
    }
    if (policy == "Orphan" || other_owner_alive) {
      if (refs.empty()) {
        dep["metadata"].erase("ownerReferences");
      } else {
        dep["metadata"]["ownerReferences"] = refs;
      }
      store_.Put(dk, std::move(dep));
      cv_.notify_all();
    } else {
      bool removed = false;
      DeleteObject(dk, "Background", &removed);
    }
  }
}

}  // namespace neuron::fakes::apiserver
