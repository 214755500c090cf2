#include "lib/k8s/rest_client.h"

#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/base/json_ondemand.h"
#include "lib/base/status_macros.h"
#include "lib/k8s/errors.h"

namespace neuron::k8s {
namespace {

void AddParam(std::string& path, const char* key, const std::string& value) {
  if (value.empty()) return;
  absl::StrAppend(&path, path.find('?') == std::string::npos ? "?" : "&", key, "=",
                  QueryEscape(value));
}

std::string NameOf(const nlohmann::json& obj) { return StringAt(obj, {"metadata", "name"}); }

// Far deeper than any API object (a CRD's schema is the deepest), shallow enough for the
// recursive readers of a tree.
constexpr int kMaxBodyDepth = 512;

absl::StatusOr<nlohmann::json> ParseBody(const std::string& body) {
  if (body.empty()) return nlohmann::json::object();
  absl::StatusOr<nlohmann::json> j = ParsePruned(body, JsonKeep{}, kMaxBodyDepth);  // whole
  if (!j.ok()) {
    return absl::DataLossError(
        absl::StrCat("k8s: response body is not valid JSON: ", j.status().message()));
  }
  return j;
}

}  // namespace

RestClient::RestClient(std::shared_ptr<Transport> transport, std::string default_namespace)
    : transport_(std::move(transport)), default_namespace_(std::move(default_namespace)) {}

absl::StatusOr<nlohmann::json> RestClient::Call(const HttpRequest& req) {
  NEURON_ASSIGN_OR_RETURN(HttpResponse res, transport_->Do(req));
  NEURON_RETURN_IF_ERROR(StatusFromHttp(res.status, res.body, res.retry_after));
  return ParseBody(res.body);
}

absl::StatusOr<nlohmann::json> RestClient::GetPath(const std::string& path) {
  return Call({"GET", path, "", "", {}});
}

absl::StatusOr<nlohmann::json> RestClient::Get(const ResourceRef& ref, const std::string& ns,
                                               const std::string& name,
                                               const std::string& subresource) {
  if (name.empty()) return absl::InvalidArgumentError("k8s get: empty name");
  return Call({"GET", ResourcePath(ref, ns, name, subresource), "", "", {}});
}

absl::StatusOr<ListResult> RestClient::List(const ResourceRef& ref, const std::string& ns,
                                            const ListOptions& opts) {
  std::string path = ResourcePath(ref, ns);
  AddParam(path, "labelSelector", opts.label_selector);
  AddParam(path, "fieldSelector", opts.field_selector);
  if (opts.limit > 0) AddParam(path, "limit", absl::StrCat(opts.limit));
  AddParam(path, "continue", opts.continue_token);
  AddParam(path, "resourceVersion", opts.resource_version);
  if (opts.keep) return ListPruned(path, *opts.keep);
  NEURON_ASSIGN_OR_RETURN(nlohmann::json j, Call({"GET", path, "", "", {}}));
  if (!j.is_object() || !j.contains("items") || !(j["items"].is_array() || j["items"].is_null())) {
    return absl::DataLossError(absl::StrCat("k8s list ", path, ": no items array"));
  }
  ListResult out;
  if (j["items"].is_array()) {
    out.items.reserve(j["items"].size());
    for (auto& item : j["items"]) out.items.push_back(std::move(item));
  }
  if (j.contains("metadata") && j["metadata"].is_object()) {
    const auto& m = j["metadata"];
    out.resource_version = m.value("resourceVersion", "");
    out.continue_token = m.value("continue", "");
  }
  return out;
}

namespace {

namespace od = simdjson::ondemand;

// Nesting allowed in what is kept of one item (Pods nest about 10 deep).
constexpr int kMaxItemDepth = 128;

// The items of a list, each pruned to `keep`; null is an empty list.
absl::Status ReadItems(od::value v, const JsonKeep& keep, od::document& doc, const JsonInput& in,
                       std::vector<nlohmann::json>* items) {
  bool is_null = false;
  if (v.is_null().get(is_null) == simdjson::SUCCESS && is_null) return absl::OkStatus();
  od::array array;
  if (simdjson::error_code e = v.get_array().get(array)) return JsonErrorAt("items", e, doc, in);
  for (auto element : array) {
    od::value item;
    simdjson::error_code e = element.get(item);
    if (!e) e = ReadPrunedJson(item, keep, kMaxItemDepth, &items->emplace_back());
    if (e) return JsonErrorAt(absl::StrCat("items[", items->size() - 1, "]"), e, doc, in);
  }
  return absl::OkStatus();
}

// metadata.resourceVersion and metadata.continue; null is no metadata.
absl::Status ReadListMeta(od::value v, od::document& doc, const JsonInput& in, ListResult* out) {
  bool is_null = false;
  if (v.is_null().get(is_null) == simdjson::SUCCESS && is_null) return absl::OkStatus();
  od::object meta;
  if (simdjson::error_code e = v.get_object().get(meta)) return JsonErrorAt("metadata", e, doc, in);
  simdjson::error_code e = simdjson::SUCCESS;
  for (auto field : meta) {
    std::string_view key;
    std::string_view value;
    if ((e = field.unescaped_key().get(key))) break;
    std::string* slot = key == "resourceVersion" ? &out->resource_version
                        : key == "continue"      ? &out->continue_token
                                                 : nullptr;
    if (slot == nullptr) continue;
    if ((e = field.value().get_string().get(value))) break;
    slot->assign(value);
  }
  if (e) return JsonErrorAt("metadata", e, doc, in);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ListResult> RestClient::ListPruned(const std::string& path, const JsonKeep& keep) {
  NEURON_ASSIGN_OR_RETURN(HttpResponse res, transport_->Do({"GET", path, "", "", {}}));
  NEURON_RETURN_IF_ERROR(StatusFromHttp(res.status, res.body, res.retry_after));
  const auto lost = [&](const absl::Status& why) {
    return absl::DataLossError(absl::StrCat("k8s list ", path, ": ", why.message()));
  };
  const JsonInput in(res.body);
  JsonParser parser;
  od::document doc;
  od::object top;
  simdjson::error_code e = parser.Iterate(in).get(doc);
  if (!e) e = doc.get_object().get(top);
  if (e) return lost(JsonErrorAt("not a JSON object", e, doc, in));
  ListResult out;
  bool has_items = false;
  for (auto field : top) {
    std::string_view key;
    od::value v;
    if ((e = field.unescaped_key().get(key)) || (e = field.value().get(v))) break;
    absl::Status s = absl::OkStatus();
    if (key == "items") {
      has_items = true;
      s = ReadItems(v, keep, doc, in, &out.items);
    } else if (key == "metadata") {
      s = ReadListMeta(v, doc, in, &out);
    }
    if (!s.ok()) return lost(s);
  }
  if (!e) e = ExpectEnd(doc);
  if (e) return lost(JsonErrorAt("invalid JSON", e, doc, in));
  if (!has_items) return absl::DataLossError(absl::StrCat("k8s list ", path, ": no items array"));
  return out;
}

absl::StatusOr<ListResult> RestClient::ListAll(const ResourceRef& ref, const std::string& ns,
                                               ListOptions opts) {
  ListResult all;
  bool first = true;
  while (true) {
    NEURON_ASSIGN_OR_RETURN(ListResult page, List(ref, ns, opts));
    if (first) all.resource_version = page.resource_version;
    first = false;
    // The apiserver serves later pages from the first page's snapshot, so its RV stands.
    for (auto& item : page.items) all.items.push_back(std::move(item));
    if (page.continue_token.empty()) break;
    opts.continue_token = page.continue_token;
    opts.resource_version.clear();  // not allowed together with continue
  }
  return all;
}

absl::StatusOr<nlohmann::json> RestClient::Create(const ResourceRef& ref, const std::string& ns,
                                                  const nlohmann::json& obj) {
  return Call({"POST", ResourcePath(ref, ns), obj.dump(), "application/json", {}});
}

absl::Status RestClient::Evict(const std::string& ns, const std::string& name) {
  if (name.empty()) return absl::InvalidArgumentError("k8s evict: empty name");
  const nlohmann::json body = {{"apiVersion", "policy/v1"},
                               {"kind", "Eviction"},
                               {"metadata", {{"name", name}, {"namespace", ns}}}};
  HttpRequest req{"POST",
                  ResourcePath(resources::kPods, ns, name, "eviction"),
                  body.dump(),
                  "application/json",
                  {}};
  req.retry = false;
  NEURON_ASSIGN_OR_RETURN(HttpResponse res, transport_->Do(req));
  absl::Status s = StatusFromHttp(res.status, res.body, res.retry_after);
  if (res.status == 429) return absl::ResourceExhaustedError(s.message());
  return s;
}

absl::StatusOr<nlohmann::json> RestClient::Update(const ResourceRef& ref, const std::string& ns,
                                                  const nlohmann::json& obj,
                                                  const std::string& subresource) {
  const std::string name = NameOf(obj);
  if (name.empty()) return absl::InvalidArgumentError("k8s update: object has no metadata.name");
  return Call(
      {"PUT", ResourcePath(ref, ns, name, subresource), obj.dump(), "application/json", {}});
}

absl::StatusOr<nlohmann::json> RestClient::Delete(const ResourceRef& ref, const std::string& ns,
                                                  const std::string& name,
                                                  const DeleteOptions& opts) {
  if (name.empty()) return absl::InvalidArgumentError("k8s delete: empty name");
  nlohmann::json body = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
  if (!opts.propagation_policy.empty()) body["propagationPolicy"] = opts.propagation_policy;
  if (opts.grace_period_seconds) body["gracePeriodSeconds"] = *opts.grace_period_seconds;
  if (!opts.precondition_uid.empty()) body["preconditions"]["uid"] = opts.precondition_uid;
  if (!opts.precondition_resource_version.empty()) {
    body["preconditions"]["resourceVersion"] = opts.precondition_resource_version;
  }
  return Call({"DELETE", ResourcePath(ref, ns, name), body.dump(), "application/json", {}});
}

absl::StatusOr<nlohmann::json> RestClient::Patch(const ResourceRef& ref, const std::string& ns,
                                                 const std::string& name, PatchType type,
                                                 const nlohmann::json& patch,
                                                 const PatchOptions& opts) {
  if (name.empty()) return absl::InvalidArgumentError("k8s patch: empty name");
  std::string content_type;
  switch (type) {
    case PatchType::kMerge:
      content_type = "application/merge-patch+json";
      break;
    case PatchType::kJsonPatch:
      if (!patch.is_array()) return absl::InvalidArgumentError("k8s patch: JSON patch not array");
      content_type = "application/json-patch+json";
      break;
    case PatchType::kStrategicMerge:
      content_type = "application/strategic-merge-patch+json";
      break;
    case PatchType::kApply:
      content_type = "application/apply-patch+yaml";  // JSON is valid YAML
      if (opts.field_manager.empty() || opts.field_manager.size() > 128) {
        return absl::InvalidArgumentError("k8s apply: fieldManager must be 1..128 characters");
      }
      break;
  }
  if (opts.force && type != PatchType::kApply) {
    return absl::InvalidArgumentError("k8s patch: force is only allowed for apply");
  }
  std::string path = ResourcePath(ref, ns, name, opts.subresource);
  AddParam(path, "fieldManager", opts.field_manager);
  if (opts.force) AddParam(path, "force", "true");
  return Call({"PATCH", path, patch.dump(), content_type, {}});
}

absl::StatusOr<nlohmann::json> RestClient::Apply(const ResourceRef& ref, const std::string& ns,
                                                 const nlohmann::json& obj,
                                                 const std::string& field_manager, bool force,
                                                 const std::string& subresource) {
  if (!obj.is_object() || !obj.contains("apiVersion") || !obj.contains("kind") ||
      NameOf(obj).empty()) {
    return absl::InvalidArgumentError("k8s apply: object needs apiVersion, kind, metadata.name");
  }
  if (MemberOrNull(obj, "metadata").contains("managedFields")) {
    return absl::InvalidArgumentError("k8s apply: object must not carry managedFields");
  }
  return Patch(ref, ns, NameOf(obj), PatchType::kApply, obj,
               PatchOptions{field_manager, force, subresource});
}

absl::Status RetryOnConflict(const std::function<absl::Status()>& fn, int attempts) {
  absl::Status s;
  for (int i = 0; i < std::max(1, attempts); ++i) {
    s = fn();
    if (!IsConflict(s)) return s;
  }
  return s;
}

absl::StatusOr<nlohmann::json> UpdateWithRetry(
    RestClient& client, const ResourceRef& ref, const std::string& ns, const std::string& name,
    const std::function<absl::Status(nlohmann::json&)>& mutate, const std::string& subresource,
    int attempts) {
  nlohmann::json result;
  absl::Status s = RetryOnConflict(
      [&]() -> absl::Status {
        NEURON_ASSIGN_OR_RETURN(nlohmann::json obj, client.Get(ref, ns, name));
        NEURON_RETURN_IF_ERROR(mutate(obj));
        NEURON_ASSIGN_OR_RETURN(result, client.Update(ref, ns, obj, subresource));
        return absl::OkStatus();
      },
      attempts);
  if (!s.ok()) return s;
  return result;
}

}  // namespace neuron::k8s
