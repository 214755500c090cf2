// File: lib/extender/group_decide.h
// Filter and prioritize for pods of UltraServer groups (pod_group.h): the view decides which
// candidates stand (their set is whole, healthy, Ready and held by no other group; the first
// pod goes to node 0 of a free set, later pods to the rest of the group's set), then every
// node of that set must fit the pod's Neuron request as decide.h judges a single node.
// Reasons name the set and what to do about it: "UltraServer set ab12 is held by group
// ns/job-a", "node n3 of UltraServer set ab12 reports unhealthy Neuron devices ...".
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "lib/extender/cluster_view.h"
#include "lib/extender/decision_memo.h"

namespace neuron::extender {

// The verdict on each of `names` for group pod `pod` (pod.group set), in their order: pointers
// into `pool` (candidates failing for the same reason share one), valid while it lives.
std::vector<const Verdict*> GroupVerdicts(const ClusterView& view, const PodInfo& pod,
                                          const std::vector<std::string_view>& names,
                                          std::deque<Verdict>& pool);

// Prioritize's scores (0..10) for group pod `pod`; 0 where the pod's group is invalid.
std::vector<int> GroupScores(const ClusterView& view, const PodInfo& pod,
                             const std::vector<std::string_view>& names);

}  // namespace neuron::extender
