// File: lib/extender/decide.h
// Filter and prioritize decisions on one node's state, with reasons a person can act on:
//   unresolvable (no state of the node could ever fit; excluded from preemption):
//     "trn1.32xlarge takes 1, 4, 8 or 16 devices; asked 3", "inf2.xlarge has 1 device; asked 2"
//   resolvable (would fit once pods leave):
//     "largest connected free block is 2 devices; asked 4", "3 of 16 devices free; asked 4"
// Scores are 0..10 (MaxExtenderPriority): binpack uses lib/topology's score (fills nodes and keeps
// large blocks free); spread prefers the node left with the most free IDs.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/extender/cluster_view.h"
#include "lib/extender/wire.h"

namespace neuron::extender {

enum class Policy { kBinpack, kSpread };
absl::StatusOr<Policy> ParsePolicy(const std::string& s);

// `node` may be null (not in the view). A node state with a memo (ClusterView::Snapshot)
// answers a request it has already decided from the memo.
Verdict Evaluate(const NodeState* node, const NeuronRequest& req);
// 0..10; 0 when the request does not fit.
int Score(const NodeState& node, const NeuronRequest& req, Policy policy);

// The verdict on each candidate of a filter request, in request order. The pointers point into
// the snapshots' memos (kept alive by `states`) or into `own`, and stay valid while this lives.
struct FilterVerdicts {
  std::vector<const Verdict*> of;
  std::vector<std::shared_ptr<const NodeState>> states;
  std::deque<Verdict> own;  // verdicts on nodes without a memo (unknown nodes)
};
FilterVerdicts DecideFilter(const ClusterView& view, const ExtenderArgs& args);

// Whole requests. Pods without Neuron requests pass every candidate (scores 0).
// `categories`, if set, receives one category per candidate.
FilterResult Filter(const ClusterView& view, const ExtenderArgs& args,
                    std::vector<std::string>* categories = nullptr);
std::vector<HostPriority> Prioritize(const ClusterView& view, const ExtenderArgs& args,
                                     Policy policy);
// Prioritize's scores alone, in candidate order (args.CandidateNames()).
std::vector<int> Scores(const ClusterView& view, const ExtenderArgs& args, Policy policy);

// For each candidate node: keep it only if evicting its proposed victims leaves a valid set for
// the pod, and trim the victims to those actually needed (victims are tried for keeping in the
// order given, so kube-scheduler's lowest-priority-first order decides who goes). A node where
// no victim is needed is dropped: an empty victim list is an error to kube-scheduler.
std::map<std::string, MetaVictims> Preempt(const ClusterView& view, const PreemptionArgs& args);

}  // namespace neuron::extender
