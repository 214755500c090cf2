#include "lib/dra/slice_publisher.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/dra/names.h"
#include "lib/dra/slice_compare.h"
#include "lib/k8s/discovery.h"
#include "lib/k8s/errors.h"
#include "spdlog/spdlog.h"

namespace neuron::dra {
namespace {

using nlohmann::json;

constexpr char kGroup[] = "resource.k8s.io";
constexpr char kResource[] = "resourceslices";
constexpr size_t kMaxName = 253;
constexpr absl::Duration kMaxRetryAfter = absl::Seconds(60);

// `s` with "<what>: " before its message; code and payloads (the API reason) kept.
absl::Status Annotate(const absl::Status& s, absl::string_view what) {
  if (s.ok()) return s;
  absl::Status out(s.code(), absl::StrCat(what, ": ", s.message()));
  s.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  return out;
}

// metadata.name of a ResourceSlice: a DNS-1123 subdomain.
bool IsDnsSubdomain(absl::string_view name) {
  if (name.empty() || name.size() > kMaxName) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return alnum(c) || c == '-' || c == '.'; });
}

absl::Status CheckSlices(const std::vector<ResourceSliceModel>& slices,
                         const std::string& node_name) {
  std::set<std::string> names;
  for (const ResourceSliceModel& s : slices) {
    const auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat("ResourceSlice \"", s.name, "\": ", why));
    };
    if (!IsDnsSubdomain(s.name)) return bad("name is not a DNS subdomain");
    if (!names.insert(s.name).second) return bad("name given twice");
    if (s.driver != kDriverName) return bad(absl::StrCat("driver is not ", kDriverName));
    if (s.node_name != node_name) return bad(absl::StrCat("node is not ", node_name));
    if (s.pool_name.empty() || s.pool_name != slices.front().pool_name) {
      return bad("all slices must name one pool");
    }
  }
  return absl::OkStatus();
}

json NodeOwner(const std::string& node_name, const std::string& uid) {
  // Controller, as upstream's resourceslice controller sets it; no blockOwnerDeletion (that
  // would need permission to delete Nodes).
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"name", node_name},
          {"uid", uid},
          {"controller", true}};
}

}  // namespace

SlicePublisher::SlicePublisher(k8s::RestClient& client, std::string node_name,
                               SlicePublisherOptions options)
    : client_(client), node_name_(std::move(node_name)), options_(std::move(options)) {}

absl::Status SlicePublisher::Publish(const std::vector<ResourceSliceModel>& slices) {
  NEURON_RETURN_IF_ERROR(CheckSlices(slices, node_name_));
  absl::MutexLock lock(&mu_);
  absl::Status s = Sync(slices);
  if (!s.ok()) known_ = false;  // a half-done sync: re-read the server next time
  return s;
}

void SlicePublisher::Invalidate() {
  absl::MutexLock lock(&mu_);
  known_ = false;
  api_.reset();  // an upgraded control plane may serve another version now
  node_uid_.clear();
}

int64_t SlicePublisher::pool_generation() const {
  absl::MutexLock lock(&mu_);
  return generation_;
}

std::optional<ResourceApi> SlicePublisher::api() const {
  absl::MutexLock lock(&mu_);
  return api_;
}

absl::Status SlicePublisher::Sync(const std::vector<ResourceSliceModel>& slices) {
  if (!api_) NEURON_RETURN_IF_ERROR(ChooseApi());
  if (!known_) NEURON_RETURN_IF_ERROR(ReadLiveSlices());
  int64_t floor = 0;
  for (const ResourceSliceModel& s : slices) floor = std::max(floor, s.pool_generation);
  std::map<std::string, json> specs = Render(slices, generation_);
  if (floor <= generation_ && Unchanged(specs)) return absl::OkStatus();

  if (!slices.empty()) {
    generation_ = std::max(generation_ + 1, floor);
    specs = Render(slices, generation_);
    if (node_uid_.empty()) NEURON_RETURN_IF_ERROR(ReadNodeUid());
    for (const auto& [name, spec] : specs) NEURON_RETURN_IF_ERROR(Apply(name, spec));
  }
  // After the applies: the leftovers carry an older generation, which schedulers already
  // disregard, so the pool is never seen with devices missing.
  std::vector<std::string> stale;
  for (const auto& [name, spec] : applied_) {
    if (!specs.contains(name)) stale.push_back(name);
  }
  for (const std::string& name : stale) NEURON_RETURN_IF_ERROR(Remove(name));
  spdlog::info("published ResourceSlices node={} generation={} slices={} deleted={}", node_name_,
               generation_, specs.size(), stale.size());
  return absl::OkStatus();
}

absl::Status SlicePublisher::ChooseApi() {
  k8s::Discovery discovery(client_);
  for (const auto& [api, version] :
       {std::pair{ResourceApi::kV1, "v1"}, std::pair{ResourceApi::kV1beta1, "v1beta1"}}) {
    bool served = false;
    auto call = [&, v = version] {
      absl::StatusOr<bool> r = discovery.IsServed(kGroup, v, kResource);
      if (r.ok()) served = *r;
      return r.status();
    };
    NEURON_RETURN_IF_ERROR(Annotate(Retry(call), absl::StrCat("discover ", kGroup, "/", version)));
    if (served) {
      api_ = api;
      ref_ = k8s::ResourceRef{kGroup, version, kResource, false};
      return absl::OkStatus();
    }
  }
  return absl::FailedPreconditionError(
      "the API server serves no ResourceSlices (resource.k8s.io/v1 or v1beta1): DRA needs "
      "Kubernetes 1.32 or later with the resource.k8s.io API enabled");
}

absl::Status SlicePublisher::ReadNodeUid() {
  json node;
  auto call = [&] {
    absl::StatusOr<json> r = client_.Get(k8s::resources::kNodes, "", node_name_);
    if (!r.ok()) return r.status();
    node = *std::move(r);
    return absl::OkStatus();
  };
  NEURON_RETURN_IF_ERROR(
      Annotate(Retry(call), absl::StrCat("get Node ", node_name_, " (owner of its slices)")));
  if (node.is_object()) node_uid_ = node.value("/metadata/uid"_json_pointer, std::string());
  if (node_uid_.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("Node ", node_name_, " has no metadata.uid"));
  }
  return absl::OkStatus();
}

absl::Status SlicePublisher::ReadLiveSlices() {
  k8s::ListOptions opts;
  opts.field_selector = absl::StrCat("spec.nodeName=", node_name_, ",spec.driver=", kDriverName);
  k8s::ListResult list;
  // A copy for the lambda: the thread-safety analysis does not see our lock inside it.
  const k8s::ResourceRef ref = ref_;
  auto call = [&] {
    absl::StatusOr<k8s::ListResult> r = client_.ListAll(ref, "", opts);
    if (!r.ok()) return r.status();
    list = *std::move(r);
    return absl::OkStatus();
  };
  NEURON_RETURN_IF_ERROR(
      Annotate(Retry(call), absl::StrCat("list ResourceSlices of node ", node_name_)));
  applied_.clear();
  stored_.clear();
  for (const json& item : list.items) {
    if (!item.is_object()) continue;
    const std::string name = item.value("/metadata/name"_json_pointer, std::string());
    if (name.empty()) continue;
    const json spec = item.value("spec", json::object());
    const json generation =
        spec.is_object() ? spec.value("/pool/generation"_json_pointer, json(0)) : json(0);
    if (generation.is_number_integer()) {
      // Never below one used before, by this process or an earlier run.
      generation_ = std::max(generation_, generation.get<int64_t>());
    }
    applied_[name] = spec;
    stored_[name] = spec;
  }
  known_ = true;
  return absl::OkStatus();
}

std::map<std::string, json> SlicePublisher::Render(const std::vector<ResourceSliceModel>& slices,
                                                   int64_t generation) const {
  std::map<std::string, json> out;
  for (const ResourceSliceModel& s : slices) {
    json spec = std::move(ResourceSliceJson(s, *api_)["spec"]);
    spec["pool"]["generation"] = generation;
    spec["pool"]["resourceSliceCount"] = static_cast<int64_t>(slices.size());
    out[s.name] = std::move(spec);
  }
  return out;
}

bool SlicePublisher::Unchanged(const std::map<std::string, json>& specs) const {
  if (specs.size() != applied_.size()) return false;
  for (const auto& [name, spec] : specs) {
    auto it = applied_.find(name);
    if (it == applied_.end() || !SameSliceSpec(spec, it->second)) return false;
  }
  return true;
}

absl::Status SlicePublisher::Apply(const std::string& name, const json& spec) {
  json body = {
      {"apiVersion", ref_.GroupVersion()},
      {"kind", "ResourceSlice"},
      {"metadata", {{"name", name}, {"ownerReferences", {NodeOwner(node_name_, node_uid_)}}}},
      {"spec", spec}};
  if (auto it = stored_.find(name); it != stored_.end()) KeepTaintTimes(body["spec"], it->second);
  json reply;
  const k8s::ResourceRef ref = ref_;  // the lambda's copy, as in ReadLiveSlices
  // force: these objects are ours alone; a manual edit must not block the driver.
  auto call = [&] {
    absl::StatusOr<json> r = client_.Apply(ref, "", body, options_.field_manager, /*force=*/true);
    if (!r.ok()) return r.status();
    reply = *std::move(r);
    return absl::OkStatus();
  };
  NEURON_RETURN_IF_ERROR(Annotate(Retry(call), absl::StrCat("apply ResourceSlice ", name)));
  applied_[name] = spec;
  stored_[name] = reply.is_object() ? reply.value("spec", json::object()) : json::object();
  return absl::OkStatus();
}

absl::Status SlicePublisher::Remove(const std::string& name) {
  const k8s::ResourceRef ref = ref_;  // the lambda's copy, as in ReadLiveSlices
  absl::Status s = Retry([&] { return client_.Delete(ref, "", name).status(); });
  if (!s.ok() && !absl::IsNotFound(s)) {
    return Annotate(s, absl::StrCat("delete ResourceSlice ", name));
  }
  applied_.erase(name);
  stored_.erase(name);
  return absl::OkStatus();
}

absl::Status SlicePublisher::Retry(const std::function<absl::Status()>& call) {
  Clock& clock = options_.clock != nullptr ? *options_.clock : Clock::Real();
  Backoff backoff(options_.backoff);
  for (int attempt = 1;; ++attempt) {
    absl::Status s = call();
    if (!absl::IsUnavailable(s) || attempt >= options_.max_attempts) return s;
    absl::Duration delay = backoff.Next();
    if (std::optional<int> after = k8s::RetryAfterSeconds(s)) {
      delay = std::max(delay, std::min(absl::Seconds(*after), kMaxRetryAfter));
    }
    spdlog::warn("ResourceSlice API call unavailable, retrying node={} attempt={} delay={} err={}",
                 node_name_, attempt, absl::FormatDuration(delay), s.ToString());
    clock.SleepFor(delay);
  }
}

}  // namespace neuron::dra
