// File: tests/fakes/apiserver/api_core.cc
// Routing, discovery, reads (get/list) and test hooks. Writes: api_write.cc; watch: watch.cc.
#include "tests/fakes/apiserver/api_core.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "tests/fakes/apiserver/selectors.h"
#include "tests/fakes/apiserver/watch.h"

namespace neuron::fakes::apiserver {

std::string HttpRequest::Param(const std::string& name) const {
  auto it = params.find(name);
  return it == params.end() ? "" : it->second;
}

bool HttpRequest::Flag(const std::string& name) const {
  const std::string v = Param(name);
  return v == "1" || v == "true" || v == "True";
}

std::string MediaType(const std::string& content_type) {
  std::string mt = content_type.substr(0, content_type.find(';'));
  return absl::AsciiStrToLower(absl::StripAsciiWhitespace(mt));
}

ApiCore::ApiCore() = default;
ApiCore::~ApiCore() = default;

namespace {
std::vector<std::string> Segments(const std::string& path) {
  return absl::StrSplit(path, '/', absl::SkipEmpty());
}

HttpResponse FromError(const ApiError& e) {
  HttpResponse r;
  r.status = e.code;
  r.body = e.ToStatus();
  if (e.retry_after_s > 0) r.headers.emplace_back("Retry-After", std::to_string(e.retry_after_s));
  return r;
}

ApiError NoSuchResource() {
  ApiError e = MakeError(404, "the server could not find the requested resource");
  e.details = json::object();
  return e;
}
}  // namespace

ResourcePath ApiCore::ParsePath(const std::string& path, bool* is_collection) {
  std::vector<std::string> s = Segments(path);
  std::string group, version;
  size_t i;
  if (s.size() >= 3 && s[0] == "api") {
    version = s[1];
    i = 2;
  } else if (s.size() >= 4 && s[0] == "apis") {
    group = s[1];
    version = s[2];
    i = 3;
  } else {
    throw NoSuchResource();
  }
  std::vector<std::string> rest(s.begin() + static_cast<long>(i), s.end());
  ResourcePath rp;
  const ResourceType* t = nullptr;
  if (rest.size() >= 3 && rest[0] == "namespaces") {
    t = registry_.Find(group, version, rest[2]);
    if (t != nullptr && t->namespaced) {
      rp.ns = rest[1];
      rest.erase(rest.begin(), rest.begin() + 2);
    } else {
      t = nullptr;
    }
  }
  if (t == nullptr) {
    t = registry_.Find(group, version, rest[0]);
    if (t == nullptr) throw NoSuchResource();
    if (t->namespaced) {
      if (rest.size() > 1) throw NoSuchResource();  // namespaced item without namespace
      rp.all_namespaces = true;
    }
  }
  if (rest.size() > 3) throw NoSuchResource();
  rp.type = *t;
  if (rest.size() >= 2) rp.name = rest[1];
  if (rest.size() == 3) {
    rp.subresource = rest[2];
    const bool ok = (rp.subresource == "status" && t->has_status) ||
                    (rp.subresource == "binding" && t->has_binding) ||
                    (rp.subresource == "eviction" && t->has_eviction);
    if (!ok) throw NoSuchResource();
  }
  *is_collection = rest.size() == 1;
  return rp;
}

HttpResponse ApiCore::Discovery(const std::string& path) {
  std::vector<std::string> s = Segments(path);
  HttpResponse r;
  if (s.size() >= 2 && s[0] == "openapi" && s[1] == "v3") {
    if (s.size() == 2) r.body = registry_.OpenApiV3Index();
    if (s.size() == 4 && s[2] == "api") r.body = registry_.OpenApiV3("", s[3]);
    if (s.size() == 5 && s[2] == "apis") r.body = registry_.OpenApiV3(s[3], s[4]);
  } else if (s.size() == 1 && s[0] == "api") {
    r.body = registry_.ApiVersions(server_address_);
  } else if (s.size() == 2 && s[0] == "api") {
    r.body = registry_.ResourceList("", s[1]);
  } else if (s.size() == 1 && s[0] == "apis") {
    r.body = registry_.GroupList();
  } else if (s.size() == 2 && s[0] == "apis") {
    r.body = registry_.Group(s[1]);
    if (!r.body.is_null()) {
      r.body["kind"] = "APIGroup";
      r.body["apiVersion"] = "v1";
    }
  } else if (s.size() == 3 && s[0] == "apis") {
    r.body = registry_.ResourceList(s[1], s[2]);
  }
  if (r.body.is_null()) return FromError(NoSuchResource());
  return r;
}

HttpResponse ApiCore::Handle(const HttpRequest& req) {
  std::unique_lock lock(mu_);
  HttpResponse r;
  try {
    r = Dispatch(req);
  } catch (const ApiError& e) {
    r = FromError(e);
  }
  // What kube-controller-manager would do next (asynchronously there).
  if (req.method != "GET") SyncDisruptionBudgets(false);
  return r;
}

HttpResponse ApiCore::Dispatch(const HttpRequest& req) {
  const std::vector<std::string> s = Segments(req.path);
  const bool discovery = (!s.empty() && s[0] == "api" && s.size() <= 2) ||
                         (!s.empty() && s[0] == "apis" && s.size() <= 3) ||
                         (s.size() >= 2 && s[0] == "openapi" && s[1] == "v3");
  if (discovery) {
    if (req.method != "GET") throw MakeError(405, "method not allowed");
    return Discovery(req.path);
  }
  bool collection = false;
  ResourcePath rp = ParsePath(req.path, &collection);
  const std::string& m = req.method;
  if (collection) {
    if (m == "GET") return List(rp, req);
    if (m == "POST") {
      if (rp.all_namespaces) throw NoSuchResource();
      return Create(rp, req);
    }
    if (m == "DELETE") return DeleteCollection(rp, req);
  } else if (rp.subresource == "binding") {
    if (m == "POST") return Bind(rp, req);
  } else if (rp.subresource == "eviction") {
    if (m == "POST") return Evict(rp, req);
  } else {
    if (m == "GET") return GetItem(rp);
    if (m == "PUT") return Replace(rp, req);
    if (m == "PATCH") return Patch(rp, req);
    if (m == "DELETE" && rp.subresource.empty()) return Delete(rp, req);
  }
  throw MakeError(405, "the server does not allow this method on the requested resource");
}

namespace {
// `served`: items on this and earlier pages (ours; upstream's token has no such field).
std::string EncodeContinue(int64_t rv, const std::string& last_key, int64_t served) {
  json tok = {{"v", "meta.k8s.io/v1"}, {"rv", rv}, {"start", last_key}, {"served", served}};
  return absl::WebSafeBase64Escape(tok.dump());
}
}  // namespace

HttpResponse ApiCore::GetItem(const ResourcePath& rp) {
  const json* obj = store_.Find(rp.Key());
  if (obj == nullptr) throw NotFound(rp.type.group, rp.type.plural, rp.name);
  return HttpResponse{200, rp.type.Present(*obj), {}};
}

HttpResponse ApiCore::List(const ResourcePath& rp, const HttpRequest& req) {
  auto labels = LabelSelector::Parse(req.Param("labelSelector"));
  if (!labels.ok()) throw BadRequest(std::string(labels.status().message()));
  auto fields = FieldSelector::Parse(req.Param("fieldSelector"), rp.type.field_labels);
  if (!fields.ok()) throw BadRequest(std::string(fields.status().message()));
  int64_t limit = 0;
  if (!req.Param("limit").empty() && !absl::SimpleAtoi(req.Param("limit"), &limit)) {
    throw BadRequest("invalid limit");
  }
  const std::string prefix = StorePrefix(rp.type.group, rp.type.plural, rp.ns, rp.all_namespaces);
  std::string after;
  // Simplification: lists always serve the current state; resourceVersion/resourceVersionMatch
  // are ignored (upstream can serve from the watch cache or an exact etcd revision).
  int64_t list_rv = store_.rv();
  int64_t served_before = 0;
  if (const std::string cont = req.Param("continue"); !cont.empty()) {
    std::string raw;
    json tok;
    if (!absl::WebSafeBase64Unescape(cont, &raw) ||
        (tok = json::parse(raw, nullptr, false)).is_discarded() || !tok.is_object() ||
        !tok.contains("rv") || !tok["rv"].is_number_integer() || !tok.contains("start") ||
        !tok["start"].is_string()) {
      throw BadRequest("continue key is not valid: incorrect encoded start resourceVersion");
    }
    // Simplification: upstream serves continued pages from the snapshot at the token's RV; we
    // serve the current state after the token's key (and report the token's RV).
    if (tok["rv"].get<int64_t>() < store_.compacted_rv()) {
      throw Expired(
          "The provided continue parameter is too old to display a consistent list result. You "
          "can start a new list without the continue parameter.");
    }
    list_rv = tok["rv"].get<int64_t>();
    after = tok["start"].get<std::string>();
    if (tok.contains("served") && tok["served"].is_number_integer()) {
      served_before = tok["served"].get<int64_t>();
    }
    if (after.rfind(prefix, 0) != 0) throw BadRequest("continue key is not valid");
  }
  // Walk the ordered store from the page's start and stop as soon as the page is full, so a
  // page costs O(page), not O(collection). Items are the store's cached serializations.
  const bool filtered = !labels->Empty() || !fields->Empty();
  const std::string api_version = rp.type.ApiVersion();
  std::string items;
  int64_t count = 0;
  std::string last_key;
  bool more = false;
  const auto& objects = store_.objects();
  auto it = after.empty() ? objects.lower_bound(prefix) : objects.upper_bound(after);
  for (; it != objects.end() && absl::StartsWith(it->first, prefix); ++it) {
    const json& obj = it->second;
    if (filtered && (!labels->Matches(obj.value("/metadata/labels"_json_pointer, json(nullptr))) ||
                     !fields->Matches(obj))) {
      continue;
    }
    if (limit > 0 && count >= limit) {
      more = true;
      break;
    }
    if (count++ > 0) items += ',';
    items += store_.Serialized(it->first, api_version, rp.type.kind);
    last_key = it->first;
  }
  json meta = {{"resourceVersion", std::to_string(list_rv)}};
  if (more) {
    meta["continue"] = EncodeContinue(list_rv, last_key, served_before + count);
    // As upstream: the count is reported only for unfiltered lists (it is exact then).
    if (!filtered) {
      PrefixCount& pc = prefix_counts_[prefix];
      if (pc.rv != store_.rv()) {  // counted once per revision, not once per page
        pc.rv = store_.rv();
        pc.count = 0;
        for (auto c = objects.lower_bound(prefix);
             c != objects.end() && absl::StartsWith(c->first, prefix); ++c) {
          ++pc.count;
        }
      }
      meta["remainingItemCount"] = std::max<int64_t>(0, pc.count - served_before - count);
    }
  }
  HttpResponse r;
  r.raw_body = absl::StrCat(R"({"kind":")", rp.type.ListKind(), R"(","apiVersion":")", api_version,
                            R"(","metadata":)", meta.dump(), R"(,"items":[)", items, "]}");
  return r;
}

bool ApiCore::IsWatch(const HttpRequest& req) {
  if (req.method != "GET" || !req.Flag("watch")) return false;
  std::unique_lock lock(mu_);
  try {
    bool collection = false;
    ParsePath(req.path, &collection);
    return collection;
  } catch (const ApiError&) {
    return false;
  }
}

std::shared_ptr<WatchStream> ApiCore::StartWatch(const HttpRequest& req, HttpResponse* error) {
  std::unique_lock lock(mu_);
  try {
    bool collection = false;
    ResourcePath rp = ParsePath(req.path, &collection);
    auto w = std::make_shared<WatchStream>(this, rp, req);
    ++open_watches_;
    return w;
  } catch (const ApiError& e) {
    *error = FromError(e);
    return nullptr;
  }
}

void ApiCore::Compact(bool kill_open_watches) {
  std::unique_lock lock(mu_);
  store_.Compact();
  if (kill_open_watches) ++kill_epoch_;
  cv_.notify_all();
}

void ApiCore::CloseWatches() {
  std::unique_lock lock(mu_);
  ++close_epoch_;
  cv_.notify_all();
}

void ApiCore::Shutdown() {
  std::unique_lock lock(mu_);
  shutdown_ = true;
  cv_.notify_all();
}

json ApiCore::Get(const std::string& path) {
  std::unique_lock lock(mu_);
  try {
    bool collection = false;
    ResourcePath rp = ParsePath(path, &collection);
    if (collection || !rp.subresource.empty()) return nullptr;
    const json* obj = store_.Find(rp.Key());
    return obj == nullptr ? json(nullptr) : rp.type.Present(*obj);
  } catch (const ApiError&) {
    return nullptr;
  }
}

absl::Status ApiCore::Put(const std::string& path, const json& object) {
  std::unique_lock lock(mu_);
  try {
    bool collection = false;
    ResourcePath rp = ParsePath(path, &collection);
    if (collection || !rp.subresource.empty()) return absl::InvalidArgumentError("not an item");
    WriteCtx ctx{"fake-apiserver-test", "Update", ""};
    const json* old = store_.Find(rp.Key());
    json obj = object;
    if (old == nullptr) {
      CreateObject(rp, std::move(obj), ctx, false);
    } else {
      if (obj.contains("metadata")) obj["metadata"].erase("resourceVersion");
      // A test hook may set status directly, as a controller would through /status.
      json copy = *old;
      UpdateObject(rp, copy, obj, ctx, false);
      if (object.contains("status") && rp.type.has_status) {
        const json* now = store_.Find(rp.Key());
        if (now != nullptr) {
          const json current = *now;
          json with_status = current;
          with_status["status"] = object["status"];
          with_status["metadata"].erase("resourceVersion");
          WriteCtx sctx{"fake-apiserver-test", "Update", "status"};
          UpdateObject(rp, current, with_status, sctx, false);
        }
      }
    }
    SyncDisruptionBudgets(false);
    return absl::OkStatus();
  } catch (const ApiError& e) {
    return absl::InvalidArgumentError(e.message);
  }
}

int64_t ApiCore::ResourceVersion() {
  std::unique_lock lock(mu_);
  return store_.rv();
}

size_t ApiCore::OpenWatches() {
  std::unique_lock lock(mu_);
  return open_watches_;
}

void ApiCore::set_server_address(const std::string& a) {
  std::unique_lock lock(mu_);
  server_address_ = a;
}

void ApiCore::DisableGroupVersion(const std::string& group_version) {
  std::unique_lock lock(mu_);
  const size_t slash = group_version.find('/');
  if (slash == std::string::npos) {
    registry_.DisableGroupVersion("", group_version);
  } else {
    registry_.DisableGroupVersion(group_version.substr(0, slash), group_version.substr(slash + 1));
  }
}

}  // namespace neuron::fakes::apiserver
