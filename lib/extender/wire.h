// File: lib/extender/wire.h
// kube-scheduler extender wire format (k8s.io/kube-scheduler/extender/v1). The Go structs have no
// json tags, so keys are the capitalised field names; Go's decoder matches keys case-insensitively,
// so we accept any case and always emit the exact names. Decoding never throws: malformed JSON,
// wrong types, absurd numbers and deep nesting are InvalidArgument with a message a person can act
// on. Embedded Pods are reduced to the typed PodInfo (pod.h); full Node objects are kept only for
// the life of one request, because Nodes mode must echo them back.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/extender/pod.h"
#include "lib/extender/pod_cache.h"
#include "nlohmann/json.hpp"

namespace neuron::extender {

// Nesting deeper than this is refused while reading: copying, comparing and serialising a json
// tree recurse, as do our readers of it.
inline constexpr int kMaxJsonDepth = 128;

// Parses `body` as JSON, refusing deep nesting; never throws.
absl::StatusOr<nlohmann::json> ParseJson(std::string_view body);

// One v1.Node of a full-Nodes request: its name and its exact JSON text, a view into the
// request body (the passing ones are echoed back byte for byte, never re-encoded).
struct RawNode {
  std::string name;
  std::string_view json;
};

// ExtenderArgs: the filter / prioritize request. Decoded in one streaming pass: only the Pod is
// parsed as a tree (it is small), names and Node items are picked out of the text.
struct ExtenderArgs {
  PodInfo pod;
  // nodeCacheCapable: names only, views into the decoded body (hundreds per request: a string
  // each was most of a request's allocations); a name written with JSON escapes, which node
  // names never need, is unescaped into `unescaped_names`. Otherwise full v1.Node objects
  // (NodeList.items): views into the decoded body. All valid while the body lives; move the
  // args, never copy them (a copy's views would point into the original's storage).
  std::optional<std::vector<std::string_view>> node_names;
  std::deque<std::string> unescaped_names;
  std::optional<std::vector<RawNode>> nodes;
  // The candidate names in either mode, in request order (views into this object).
  std::vector<std::string_view> CandidateNames() const;
};
// `pods`, if set, answers a Pod it has parsed before and keeps the ones parsed here.
absl::StatusOr<ExtenderArgs> DecodeExtenderArgs(std::string_view body, PodCache* pods = nullptr);
// As above; reads `body` in place when its capacity has room for the parser's padding
// (lib/base/json_ondemand.h: ReserveJsonPadding), else a padded copy of it.
absl::StatusOr<ExtenderArgs> DecodeExtenderArgs(const std::string& body, PodCache* pods = nullptr);
// The result holds views into the body: a temporary body would leave them dangling.
absl::StatusOr<ExtenderArgs> DecodeExtenderArgs(std::string&& body,
                                                PodCache* pods = nullptr) = delete;
inline absl::StatusOr<ExtenderArgs> DecodeExtenderArgs(const char* body) {
  return DecodeExtenderArgs(std::string_view(body));
}

// ExtenderFilterResult. In NodeNames mode `node_names` is set, in Nodes mode `nodes` (exact
// Node JSON texts, views into the request body or, when decoded, into the decoded body).
struct FilterResult {
  std::optional<std::vector<std::string>> node_names;
  std::optional<std::vector<std::string_view>> nodes;
  std::map<std::string, std::string> failed;
  std::map<std::string, std::string> failed_unresolvable;
  std::string error;
};
std::string EncodeFilterResult(const FilterResult& r);
// Tests and tools; `nodes` are views into `body`.
absl::StatusOr<FilterResult> DecodeFilterResult(std::string_view body);
absl::StatusOr<FilterResult> DecodeFilterResult(std::string&& body) = delete;  // views, as above

// HostPriorityList: [{"Host": name, "Score": 0..10}].
struct HostPriority {
  std::string host;
  int64_t score = 0;
};
std::string EncodeHostPriorityList(const std::vector<HostPriority>& list);
// The same list from hosts and their scores (same size), without copying the names.
std::string EncodeHostScores(const std::vector<std::string_view>& hosts,
                             const std::vector<int>& scores);
absl::StatusOr<std::vector<HostPriority>> DecodeHostPriorityList(std::string_view body);

// ExtenderBindingArgs / ExtenderBindingResult.
struct BindingArgs {
  std::string pod_name, pod_namespace, pod_uid, node;
};
absl::StatusOr<BindingArgs> DecodeBindingArgs(std::string_view body);
std::string EncodeBindingResult(const std::string& error);

// ExtenderPreemptionArgs / Result, reduced to UIDs (MetaVictims) in both wire modes.
struct MetaVictims {
  std::vector<std::string> pod_uids;
  int64_t num_pdb_violations = 0;
};
struct PreemptionArgs {
  PodInfo pod;
  std::map<std::string, MetaVictims> victims;  // node -> victims
};
absl::StatusOr<PreemptionArgs> DecodePreemptionArgs(std::string_view body);
std::string EncodePreemptionResult(const std::map<std::string, MetaVictims>& victims);

// {"Error": msg} (the shape of every result type that has an Error field).
std::string EncodeError(const std::string& msg);

}  // namespace neuron::extender
