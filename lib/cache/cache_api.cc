// File: lib/cache/cache_api.cc
#include "lib/cache/cache_api.h"

#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/k8s/k8s_time.h"

namespace neuron::cache {
namespace {

using nlohmann::json;

// "" when absent; InvalidArgument when present but not a string.
absl::StatusOr<std::string> OptionalString(const json& obj, std::string_view key,
                                           std::string_view where) {
  const json* v = Member(obj, key);
  if (v == nullptr) return std::string();
  if (!v->is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(where), " must be a string"));
  }
  return v->get<std::string>();
}

absl::Status ParseSpecLists(const json& spec, CacheSpec& out) {
  for (const json& s : MemberOrNull(spec, "pullSecrets")) {
    std::string name = StringMember(s, "name");
    if (name.empty()) return absl::InvalidArgumentError("spec.pullSecrets[] needs a name");
    out.pull_secrets.push_back(std::move(name));
  }
  for (const auto& [k, v] : MemberOrNull(spec, "nodeSelector").items()) {
    if (!v.is_string()) {
      return absl::InvalidArgumentError(absl::StrCat("spec.nodeSelector.", k, " must be a string"));
    }
    out.node_selector[k] = v.get<std::string>();
  }
  return absl::OkStatus();
}

json PodUseJson(const PodUse& p) {
  return {{"namespace", p.namespace_}, {"name", p.name}, {"uid", p.uid}, {"digest", p.digest}};
}

json RecordJson(const NodeCacheRecord& r) {
  json j = {{"kind", r.kind}, {"name", r.name}, {"state", r.state}};
  if (!r.namespace_.empty()) j["namespace"] = r.namespace_;
  if (!r.image.empty()) j["image"] = r.image;
  if (!r.digest.empty()) j["digest"] = r.digest;
  if (!r.reason.empty()) j["reason"] = r.reason;
  if (!r.message.empty()) j["message"] = r.message;
  if (r.bytes > 0) j["bytes"] = r.bytes;
  if (r.last_transition != absl::InfinitePast()) {
    j["lastTransitionTime"] = k8s::FormatRfc3339(r.last_transition);
  }
  if (!r.pods.empty()) {
    json pods = json::array();
    for (const PodUse& p : r.pods) pods.push_back(PodUseJson(p));
    j["pods"] = std::move(pods);
  }
  return j;
}

NodeCacheRecord ParseRecord(const json& j) {
  NodeCacheRecord r;
  r.kind = StringMember(j, "kind");
  r.namespace_ = StringMember(j, "namespace");
  r.name = StringMember(j, "name");
  r.image = StringMember(j, "image");
  r.digest = StringMember(j, "digest");
  r.state = StringMember(j, "state");
  r.reason = StringMember(j, "reason");
  r.message = StringMember(j, "message");
  r.bytes = IntOf(Member(j, "bytes"));
  if (auto t = k8s::ParseTime(StringMember(j, "lastTransitionTime")); t.ok()) {
    r.last_transition = *t;
  }
  for (const json& p : MemberOrNull(j, "pods")) {
    r.pods.push_back({StringMember(p, "namespace"), StringMember(p, "name"), StringMember(p, "uid"),
                      StringMember(p, "digest")});
  }
  return r;
}

}  // namespace

std::string CacheSpec::Describe() const {
  return namespace_.empty() ? absl::StrCat(kind, " ", name)
                            : absl::StrCat(kind, " ", namespace_, "/", name);
}

absl::StatusOr<CacheSpec> ParseCacheObject(const json& obj, std::string_view kind) {
  CacheSpec out;
  out.kind = std::string(kind);
  out.namespace_ = kind == kClusterNeuronCacheKind ? "" : StringAt(obj, {"metadata", "namespace"});
  out.name = StringAt(obj, {"metadata", "name"});
  out.uid = StringAt(obj, {"metadata", "uid"});
  out.generation = IntOf(MemberAt(obj, {"metadata", "generation"}));
  out.deleting = MemberAt(obj, {"metadata", "deletionTimestamp"}) != nullptr;
  if (out.name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(kind), " without a name"));
  }
  const json& spec = MemberOrNull(obj, "spec");
  auto image = OptionalString(spec, "image", "spec.image");
  if (!image.ok()) return image.status();
  if (image->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(out.Describe(), ": spec.image is required"));
  }
  out.image = *std::move(image);
  auto pinned = OptionalString(MemberOrNull(spec, "verify"), "digest", "spec.verify.digest");
  if (!pinned.ok()) return pinned.status();
  out.verify_digest = *std::move(pinned);
  if (absl::Status s = ParseSpecLists(spec, out); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(out.Describe(), ": ", s.message()));
  }
  out.resolved_digest = StringAt(obj, {"status", "resolvedDigest"});
  return out;
}

bool SelectsNode(const CacheSpec& spec, const json& node_labels) {
  for (const auto& [k, v] : spec.node_selector) {
    if (StringMember(node_labels, k, "\x01") != v) return false;
  }
  return true;
}

std::string WantedDigest(const CacheSpec& spec) {
  const size_t at = spec.image.rfind('@');
  if (at != std::string::npos) return spec.image.substr(at + 1);
  return spec.resolved_digest;
}

std::string ImageWithDigest(const CacheSpec& spec, std::string_view digest) {
  std::string repo = spec.image.substr(0, spec.image.rfind('@'));
  // A tag follows the last ':' after the last '/' (a ':' before it is a registry port).
  const size_t slash = repo.rfind('/');
  const size_t colon = repo.rfind(':');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    repo.resize(colon);
  }
  return absl::StrCat(repo, "@", std::string(digest));
}

bool NodeCacheRecord::operator==(const NodeCacheRecord& o) const {
  return RecordJson(*this) == RecordJson(o);
}

json BuildCacheNodeObject(const NodeCacheReport& report) {
  json caches = json::array();
  int64_t extracted = 0;
  int64_t pods = 0;
  for (const NodeCacheRecord& r : report.caches) {
    caches.push_back(RecordJson(r));
    if (r.state == "Extracted") ++extracted;
    pods += static_cast<int64_t>(r.pods.size());
  }
  json meta = {{"name", report.node_name},
               {"labels", {{"app.kubernetes.io/part-of", "aws-neuron"}}}};
  if (!report.node_uid.empty()) {
    meta["ownerReferences"] = json::array({{{"apiVersion", "v1"},
                                            {"kind", "Node"},
                                            {"name", report.node_name},
                                            {"uid", report.node_uid}}});
  }
  json status = {{"caches", std::move(caches)},
                 {"summary",
                  {{"caches", static_cast<int64_t>(report.caches.size())},
                   {"extracted", extracted},
                   {"pods", pods}}},
                 {"diskBytes", report.disk_bytes}};
  if (!report.family.empty()) status["family"] = report.family;
  return {{"apiVersion", "k8s.aws/v1alpha1"},
          {"kind", "NeuronCacheNode"},
          {"metadata", std::move(meta)},
          {"status", std::move(status)}};
}

absl::StatusOr<NodeCacheReport> ParseCacheNodeObject(const json& obj) {
  NodeCacheReport out;
  out.node_name = StringAt(obj, {"metadata", "name"});
  if (out.node_name.empty()) return absl::InvalidArgumentError("NeuronCacheNode without a name");
  const json& status = MemberOrNull(obj, "status");
  out.family = StringMember(status, "family");
  out.disk_bytes = IntOf(Member(status, "diskBytes"));
  const json& caches = MemberOrNull(status, "caches");
  if (!caches.is_null() && !caches.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat("NeuronCacheNode ", out.node_name, ": status.caches must be a list"));
  }
  for (const json& c : caches) out.caches.push_back(ParseRecord(c));
  return out;
}

}  // namespace neuron::cache
