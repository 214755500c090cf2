#include "lib/k8s/events.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/base/json_access.h"
#include "lib/k8s/errors.h"
#include "lib/k8s/k8s_time.h"
#include "lib/k8s/resource.h"

namespace neuron::k8s {
namespace {

std::string S(const nlohmann::json& o, const char* k) { return StringMember(o, k); }

}  // namespace

nlohmann::json ObjectReference(const nlohmann::json& obj) {
  if (!obj.is_object()) return nlohmann::json::object();
  if (!obj.contains("metadata")) return obj;  // already a reference
  const nlohmann::json& m = MemberOrNull(obj, "metadata");
  nlohmann::json ref = {
      {"apiVersion", S(obj, "apiVersion")}, {"kind", S(obj, "kind")}, {"name", S(m, "name")}};
  if (const std::string ns = S(m, "namespace"); !ns.empty()) ref["namespace"] = ns;
  if (const std::string uid = S(m, "uid"); !uid.empty()) ref["uid"] = uid;
  if (const std::string rv = S(m, "resourceVersion"); !rv.empty()) ref["resourceVersion"] = rv;
  return ref;
}

EventRecorder::EventRecorder(RestClient& client, std::string component, std::string host,
                             Clock* clock)
    : client_(client),
      component_(std::move(component)),
      host_(std::move(host)),
      clock_(clock ? *clock : Clock::Real()) {}

absl::Status EventRecorder::Event(const nlohmann::json& object, const std::string& type,
                                  const std::string& reason, const std::string& message) {
  if (type != kEventNormal && type != kEventWarning) {
    return absl::InvalidArgumentError(absl::StrCat("event type must be Normal or Warning: ", type));
  }
  const nlohmann::json ref = ObjectReference(object);
  const std::string obj_name = S(ref, "name");
  if (obj_name.empty()) return absl::InvalidArgumentError("event: involved object has no name");
  std::string ns = S(ref, "namespace");
  if (ns.empty()) ns = "default";
  const std::string key =
      absl::StrCat(S(ref, "apiVersion"), "\x1f", S(ref, "kind"), "\x1f", ns, "\x1f", obj_name,
                   "\x1f", S(ref, "uid"), "\x1f", type, "\x1f", reason, "\x1f", message);
  const absl::Time now = clock_.Now();
  const std::string now_s = FormatRfc3339(now);

  absl::MutexLock lock(&mu_);
  if (auto it = seen_.find(key); it != seen_.end()) {
    const int64_t count = it->second.count + 1;
    nlohmann::json patch = {{"count", count}, {"lastTimestamp", now_s}};
    absl::StatusOr<nlohmann::json> r =
        client_.Patch(resources::kEvents, it->second.ns, it->second.name, PatchType::kMerge, patch);
    if (r.ok()) {
      it->second.count = count;
      return absl::OkStatus();
    }
    if (!absl::IsNotFound(r.status())) return r.status();
    seen_.erase(it);  // the Event expired (TTL): start a new one
  }
  if (seen_.size() >= 4096) seen_.clear();  // bound the cache
  // Named as client-go names them, <object>.<unix nanos in hex>; two events in one tick (or
  // on a clock that does not move) take the next nanosecond.
  std::string name;
  absl::Status created;
  for (uint64_t tick = 0; tick < 16; ++tick) {
    name = absl::StrFormat("%s.%x", obj_name, static_cast<uint64_t>(absl::ToUnixNanos(now)) + tick);
    nlohmann::json ev = {{"apiVersion", "v1"},
                         {"kind", "Event"},
                         {"metadata", {{"name", name}, {"namespace", ns}}},
                         {"involvedObject", ref},
                         {"reason", reason},
                         {"message", message.substr(0, 1024)},
                         {"type", type},
                         {"source", {{"component", component_}}},
                         {"firstTimestamp", now_s},
                         {"lastTimestamp", now_s},
                         {"count", 1},
                         {"reportingComponent", component_},
                         {"reportingInstance", host_}};
    if (!host_.empty()) ev["source"]["host"] = host_;
    created = client_.Create(resources::kEvents, ns, ev).status();
    if (!absl::IsAlreadyExists(created)) break;
  }
  if (!created.ok()) return created;
  seen_[key] = Entry{ns, name, 1};
  return absl::OkStatus();
}

}  // namespace neuron::k8s
