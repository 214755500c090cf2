// File: lib/extender/decide.cc
#include "lib/extender/decide.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "lib/extender/group_decide.h"
#include "lib/topology/topology.h"

namespace neuron::extender {
namespace {

int CountTrue(const std::vector<bool>& v) {
  return static_cast<int>(std::count(v.begin(), v.end(), true));
}

std::string Plural(int64_t n, const char* noun) {
  return absl::StrCat(n, " ", noun, n == 1 ? "" : "s");
}

std::optional<std::vector<int>> Choose(const NodeState& st, ResourceKind kind, int count) {
  const topology::NodeTopology& t = st.info.shape->topo;
  return kind == ResourceKind::kDevice ? topology::ChooseDevices(t, st.free_devices, count)
                                       : topology::ChooseCores(t, st.free_cores, count);
}

Verdict Fail(bool unresolvable, std::string reason, const char* category) {
  return Verdict{false, unresolvable, std::move(reason), category};
}

Verdict Decide(const NodeState* st, const NeuronRequest& req);
int ComputeScore(const NodeState& st, const NeuronRequest& req, Policy policy);

}  // namespace

absl::StatusOr<Policy> ParsePolicy(const std::string& s) {
  if (s == "binpack") return Policy::kBinpack;
  if (s == "spread") return Policy::kSpread;
  return absl::InvalidArgumentError(
      absl::StrCat("policy must be binpack or spread, got \"", s, "\""));
}

namespace {

// The verdict on `st` for `req`: from the snapshot's memo when it has one (a reference into
// it: memo entries are never changed or erased while the snapshot lives), else computed into
// `scratch`.
const Verdict& VerdictFor(const NodeState* st, const NeuronRequest& req, Verdict& scratch) {
  if (st == nullptr || !st->memo) return scratch = Decide(st, req);
  DecisionMemo& m = *st->memo;
  if (const Verdict* v = m.FindVerdict(req.devices, req.cores)) return *v;
  return m.AddVerdict(req.devices, req.cores, Decide(st, req));
}

}  // namespace

Verdict Evaluate(const NodeState* st, const NeuronRequest& req) {
  Verdict scratch;
  return VerdictFor(st, req, scratch);
}

int Score(const NodeState& st, const NeuronRequest& req, Policy policy) {
  if (!st.memo) return ComputeScore(st, req, policy);
  DecisionMemo& m = *st.memo;
  const int p = static_cast<int>(policy);
  if (const int memo = m.FindScore(req.devices, req.cores, p); memo >= 0) return memo;
  const int score = ComputeScore(st, req, policy);
  m.AddScore(req.devices, req.cores, p, score);
  return score;
}

namespace {

Verdict Decide(const NodeState* st, const NeuronRequest& req) {
  if (!req.Any()) return Verdict{true, false, "", "fits"};
  if (!st) {
    return Fail(false, "node is not in the extender's cache (not synced yet, or deleted)",
                "unknown_node");
  }
  absl::StatusOr<std::pair<ResourceKind, int>> want = RequestKind(req);
  if (!want.ok()) return Fail(true, std::string(want.status().message()), "bad_request");
  if (!st->info.shape) return Fail(true, "node has no Neuron devices", "no_neuron");
  const ShapeModel& m = *st->info.shape;
  const auto [kind, count] = *want;
  const bool dev = kind == ResourceKind::kDevice;
  const char* noun = dev ? "device" : "core";
  const std::vector<bool>& valid = dev ? m.device_counts : m.core_counts;
  const int total = dev ? m.topo.devices : m.total_cores();
  if (count > total) {
    return Fail(true, absl::StrCat(m.name, " has ", Plural(total, noun), "; asked ", count),
                "shape");
  }
  if (!valid[count]) {
    std::string reason =
        dev ? absl::StrCat(m.name, " takes ", m.DeviceCountsText(), " devices; asked ", count)
            : absl::StrCat(m.name, " cannot place ", count, " cores on linked devices");
    return Fail(true, std::move(reason), "shape");
  }
  const int free = CountTrue(dev ? st->free_devices : st->free_cores);
  const int64_t alloc = dev ? st->info.alloc_devices : st->info.alloc_cores;
  if (free < count) {
    return Fail(false, absl::StrCat(free, " of ", Plural(total, noun), " free; asked ", count),
                "capacity");
  }
  // Fewer allocatable than present: the device plugin reports some unhealthy; which ones we
  // cannot tell, so only the count is checked.
  if (alloc >= 0 && alloc < total && (total - free) + count > alloc) {
    return Fail(false,
                absl::StrCat("only ", alloc, " of ", Plural(total, noun), " healthy, ",
                             total - free, " in use; asked ", count),
                "unhealthy");
  }
  if (!Choose(*st, kind, count)) {
    int largest = 0;
    for (int k = count - 1; k >= 1 && largest == 0; --k) {
      if (Choose(*st, kind, k)) largest = k;
    }
    return Fail(
        false,
        absl::StrCat("largest connected free block is ", Plural(largest, noun), "; asked ", count),
        "fragmented");
  }
  return Verdict{true, false, "", "fits"};
}

}  // namespace

namespace {

int ComputeScore(const NodeState& st, const NeuronRequest& req, Policy policy) {
  if (!st.info.shape || !req.Any()) return 0;
  absl::StatusOr<std::pair<ResourceKind, int>> want = RequestKind(req);
  if (!want.ok()) return 0;
  const auto [kind, count] = *want;
  const topology::NodeTopology& t = st.info.shape->topo;
  const bool dev = kind == ResourceKind::kDevice;
  if (policy == Policy::kBinpack) {
    return dev ? topology::ScoreDevices(t, st.free_devices, count)
               : topology::ScoreCores(t, st.free_cores, count);
  }
  if (!Choose(st, kind, count)) return 0;
  const std::vector<bool>& free = dev ? st.free_devices : st.free_cores;
  const int n = static_cast<int>(free.size());
  const int left = CountTrue(free) - count;
  return n == 0 ? 0 : 1 + (9 * left) / n;
}

}  // namespace

FilterVerdicts DecideFilter(const ClusterView& view, const ExtenderArgs& args) {
  static const Verdict kFits{true, false, "", "fits"};
  FilterVerdicts out;
  const std::vector<std::string_view> names = args.CandidateNames();
  out.of.assign(names.size(), &kFits);
  if (args.pod.group) {
    out.of = GroupVerdicts(view, args.pod, names, out.own);
    return out;
  }
  if (!args.pod.request.Any()) return out;
  out.states = view.Snapshots(names, args.pod.Key());
  Verdict scratch;
  for (size_t i = 0; i < names.size(); ++i) {
    const Verdict& v = VerdictFor(out.states[i].get(), args.pod.request, scratch);
    out.of[i] = &v != &scratch ? &v : &out.own.emplace_back(std::move(scratch));
  }
  return out;
}

FilterResult Filter(const ClusterView& view, const ExtenderArgs& args,
                    std::vector<std::string>* categories) {
  FilterResult r;
  const std::vector<std::string_view> names = args.CandidateNames();
  const FilterVerdicts verdicts = DecideFilter(view, args);
  for (size_t i = 0; i < names.size(); ++i) {
    const Verdict& v = *verdicts.of[i];
    if (categories) categories->push_back(v.category);
    if (!v.fits) {
      (v.unresolvable ? r.failed_unresolvable : r.failed).emplace(std::string(names[i]), v.reason);
    }
  }
  if (args.node_names) {
    r.node_names.emplace();
    for (size_t i = 0; i < names.size(); ++i) {
      if (verdicts.of[i]->fits) r.node_names->emplace_back(names[i]);
    }
  } else {
    r.nodes.emplace();
    for (size_t i = 0; i < names.size(); ++i) {
      if (verdicts.of[i]->fits) r.nodes->push_back((*args.nodes)[i].json);
    }
  }
  return r;
}

std::vector<int> Scores(const ClusterView& view, const ExtenderArgs& args, Policy policy) {
  const std::vector<std::string_view> names = args.CandidateNames();
  std::vector<int> out(names.size(), 0);
  if (args.pod.group) return GroupScores(view, args.pod, names);
  if (!args.pod.request.Any()) return out;
  const std::vector<std::shared_ptr<const NodeState>> states =
      view.Snapshots(names, args.pod.Key());
  for (size_t i = 0; i < names.size(); ++i) {
    if (states[i]) out[i] = Score(*states[i], args.pod.request, policy);
  }
  return out;
}

std::vector<HostPriority> Prioritize(const ClusterView& view, const ExtenderArgs& args,
                                     Policy policy) {
  const std::vector<std::string_view> names = args.CandidateNames();
  const std::vector<int> scores = Scores(view, args, policy);
  std::vector<HostPriority> out;
  out.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    out.push_back(HostPriority{std::string(names[i]), scores[i]});
  }
  return out;
}

std::map<std::string, MetaVictims> Preempt(const ClusterView& view, const PreemptionArgs& args) {
  std::map<std::string, MetaVictims> out;
  // A group's set is freed by no eviction the scheduler proposes node by node.
  if (args.pod.group) return out;
  for (const auto& [node, victims] : args.victims) {
    if (!args.pod.request.Any()) {  // not ours: nothing to add to the scheduler's choice
      out[node] = victims;
      continue;
    }
    std::set<std::string> evicted(victims.pod_uids.begin(), victims.pod_uids.end());
    // clang 14 cannot capture a structured binding: capture a named reference instead.
    auto fits = [&, &name = node] {
      std::optional<NodeState> st = view.State(name, args.pod.Key(), &evicted);
      return st && Evaluate(&*st, args.pod.request).fits;
    };
    if (!fits()) continue;
    MetaVictims kept;
    for (const std::string& uid : victims.pod_uids) {
      evicted.erase(uid);
      if (!fits()) {
        evicted.insert(uid);
        kept.pod_uids.push_back(uid);
      }
    }
    if (kept.pod_uids.empty()) continue;
    kept.num_pdb_violations =
        std::min<int64_t>(victims.num_pdb_violations, static_cast<int64_t>(kept.pod_uids.size()));
    out[node] = std::move(kept);
  }
  return out;
}

}  // namespace neuron::extender
