// File: lib/extender/cluster_view_groups.cc
// ClusterView's UltraServer part (cluster_view.h): the server-id index of sets, the groups'
// live pods and reservations, and what filter and bind check for a pod of a group. Kept apart
// from the per-node device bookkeeping, which non-group pods use exactly as before.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/extender/cluster_view.h"
#include "lib/ultraserver/labels.h"

namespace neuron::extender {
namespace {

using SetIndex = absl::flat_hash_map<std::string, std::vector<std::string>>;

std::string SetName(int size, const std::string& server_id) {
  return size == 1 ? absl::StrCat("node ", server_id) : absl::StrCat("UltraServer set ", server_id);
}

GroupCheck Refuse(bool unresolvable, std::string reason, const char* category) {
  GroupCheck c;
  c.unresolvable = unresolvable;
  c.reason = std::move(reason);
  c.category = category;
  return c;
}

std::string Joined(const std::vector<std::string>& nodes) {
  return absl::StrJoin(nodes, ", ", [](std::string* out, const std::string& n) {
    absl::StrAppend(out, n.empty() ? "?" : n);
  });
}

}  // namespace

void ClusterView::IndexNodeLocked(const std::string& name, const NodeInfo* info) {
  const NodeInfo* cur = info;
  if (cur == nullptr) {
    auto it = nodes_.find(name);
    if (it == nodes_.end() || !it->second.info) {
      return;
    }
    cur = &*it->second.info;
  }
  for (int size : {2, 4}) {
    SetIndex& index = size == 2 ? sets2_ : sets4_;
    const std::optional<ultraserver::SetMember> m = cur->ultraserver->MemberOf(size);
    if (!m) {
      continue;
    }
    if (info != nullptr) {
      std::vector<std::string>& slots = index[m->server_id];
      slots.resize(size);
      slots[m->node_id] = name;
      continue;
    }
    auto it = index.find(m->server_id);
    if (it == index.end()) {
      continue;
    }
    for (std::string& n : it->second) {
      if (n == name) {
        n.clear();
      }
    }
    if (std::all_of(it->second.begin(), it->second.end(),
                    [](const std::string& n) { return n.empty(); })) {
      index.erase(it);
    }
  }
}

bool ClusterView::SetOfLocked(const std::string& node, int size, std::string& server_id,
                              std::vector<std::string>& nodes) const {
  auto it = nodes_.find(node);
  if (it == nodes_.end() || !it->second.info || !it->second.info->ultraserver) {
    return false;
  }
  const std::optional<ultraserver::SetMember> m = it->second.info->ultraserver->MemberOf(size);
  if (!m) {
    return false;
  }
  if (size == 1) {
    server_id = node;
    nodes = {node};
    return true;
  }
  const SetIndex& index = size == 2 ? sets2_ : sets4_;
  auto s = index.find(m->server_id);
  if (s == index.end()) {
    return false;
  }
  server_id = m->server_id;
  nodes = s->second;
  return true;
}

void ClusterView::TrackGroupPodLocked(const std::string& key, const std::string& group,
                                      const std::string& node) {
  pod_group_[key] = {group, node};
  std::map<std::string, std::string>& pods = group_pods_[group];
  pods[key] = node;
  ++node_groups_[node][group];
  // All N pods bound, as the watch shows them: the reservation has done its job.
  auto r = group_res_.find(group);
  if (r != group_res_.end() && static_cast<int>(pods.size()) >= r->second.size) {
    EraseGroupReservationLocked(group);
  }
}

void ClusterView::UntrackGroupPodLocked(const std::string& key) {
  auto it = pod_group_.find(key);
  if (it == pod_group_.end()) {
    return;
  }
  const auto& [group, node] = it->second;
  if (auto g = group_pods_.find(group); g != group_pods_.end()) {
    g->second.erase(key);
    if (g->second.empty()) {
      group_pods_.erase(g);
    }
  }
  if (auto n = node_groups_.find(node); n != node_groups_.end()) {
    if (--n->second[group] <= 0) {
      n->second.erase(group);
    }
    if (n->second.empty()) {
      node_groups_.erase(n);
    }
  }
  pod_group_.erase(it);
}

void ClusterView::EraseGroupReservationLocked(const std::string& group) {
  auto r = group_res_.find(group);
  if (r == group_res_.end()) {
    return;
  }
  for (const std::string& n : r->second.nodes) {
    auto it = node_reserved_.find(n);
    if (it != node_reserved_.end() && it->second == group) {
      node_reserved_.erase(it);
    }
  }
  group_res_.erase(r);
}

std::vector<std::string> ClusterView::HoldersLocked(const std::string& node,
                                                    const std::string& except,
                                                    absl::Time now) const {
  std::vector<std::string> out;
  if (auto r = node_reserved_.find(node); r != node_reserved_.end() && r->second != except) {
    auto g = group_res_.find(r->second);
    if (g != group_res_.end() && g->second.expires > now) {
      out.push_back(r->second);
    }
  }
  if (auto n = node_groups_.find(node); n != node_groups_.end()) {
    for (const auto& [group, count] : n->second) {
      if (group != except && std::find(out.begin(), out.end(), group) == out.end()) {
        out.push_back(group);
      }
    }
  }
  return out;
}

bool ClusterView::GroupSetLocked(const PodGroup& g, absl::Time now, std::string& server_id,
                                 std::vector<std::string>& nodes) const {
  if (auto r = group_res_.find(g.key); r != group_res_.end() && r->second.expires > now) {
    server_id = r->second.server_id;
    nodes = r->second.nodes;
    return true;
  }
  if (auto p = group_pods_.find(g.key); p != group_pods_.end()) {
    for (const auto& [pod, node] : p->second) {
      if (SetOfLocked(node, g.set_size, server_id, nodes)) {
        return true;
      }
    }
  }
  return false;
}

std::set<std::string> ClusterView::TakenLocked(const std::string& group, const std::string& pod,
                                               absl::Time now) const {
  std::set<std::string> out;
  if (auto p = group_pods_.find(group); p != group_pods_.end()) {
    for (const auto& [key, node] : p->second) {
      if (key != pod) {
        out.insert(node);
      }
    }
  }
  if (auto r = group_res_.find(group); r != group_res_.end() && r->second.expires > now) {
    for (const auto& [key, node] : r->second.placed) {
      if (key != pod) {
        out.insert(node);
      }
    }
  }
  return out;
}

std::optional<std::string> ClusterView::SetProblemLocked(const PodGroup& g,
                                                         const std::string& set_name,
                                                         const std::vector<std::string>& nodes,
                                                         absl::Time now) const {
  const auto known =
      std::count_if(nodes.begin(), nodes.end(), [](const std::string& n) { return !n.empty(); });
  if (known < g.set_size) {
    return absl::StrCat(set_name, " has only ", known, " of its ", g.set_size,
                        " nodes in the cluster");
  }
  for (const std::string& n : nodes) {
    auto it = nodes_.find(n);
    if (it == nodes_.end() || !it->second.info) {
      return absl::StrCat("node ", n, " of ", set_name, " is not known");
    }
    const NodeInfo& info = *it->second.info;
    if (!info.schedulable) {
      return absl::StrCat("node ", n, " of ", set_name, " is not Ready or is cordoned");
    }
    if (!info.FullyAllocatable()) {
      return absl::StrCat("node ", n, " of ", set_name,
                          " reports unhealthy Neuron devices (allocatable ", info.alloc_devices,
                          " devices, ", info.alloc_cores, " cores)");
    }
    if (std::vector<std::string> h = HoldersLocked(n, g.key, now); !h.empty()) {
      return absl::StrCat(set_name, " is held by group ", h.front());
    }
  }
  return std::nullopt;
}

GroupCheck ClusterView::CheckNewSetLocked(const PodGroup& g, const std::string& name,
                                          absl::Time now) const {
  auto it = nodes_.find(name);
  if (it == nodes_.end() || !it->second.info) {
    return Refuse(false, "node is not in the extender's cache (not synced yet, or deleted)",
                  "unknown_node");
  }
  const NodeInfo& info = *it->second.info;
  if (!info.ultraserver) {
    return Refuse(true,
                  absl::StrCat("node is in no UltraServer (no ", ultraserver::kModeLabel,
                               " label); group ", g.key, " asks for a set of ", g.set_size),
                  "us_none");
  }
  const std::optional<ultraserver::SetMember> m = info.ultraserver->MemberOf(g.set_size);
  if (!m) {
    return Refuse(true,
                  absl::StrCat("node supports no UltraServer set of ", g.set_size, " (modes ",
                               ultraserver::ModesLabelValue(info.ultraserver->modes), ")"),
                  "us_mode");
  }
  if (g.set_size > 1 && m->node_id != 0) {
    return Refuse(
        true,
        absl::StrCat("group ", g.key, " starts on node 0 of a free UltraServer set; ",
                     "this is node ", m->node_id, " of ", SetName(g.set_size, m->server_id)),
        "us_rank");
  }
  GroupCheck ok;
  std::string server_id;
  if (!SetOfLocked(name, g.set_size, server_id, ok.fit_nodes)) {
    return Refuse(false, "the node's UltraServer set is not indexed", "us_set");
  }
  ok.set_name = SetName(g.set_size, server_id);
  if (std::optional<std::string> p = SetProblemLocked(g, ok.set_name, ok.fit_nodes, now)) {
    return Refuse(false, *std::move(p), "us_set");
  }
  ok.ok = true;
  return ok;
}

GroupCheck ClusterView::CheckInSetLocked(const PodGroup& g, const std::string& name,
                                         const std::string& server_id,
                                         const std::vector<std::string>& set,
                                         const std::set<std::string>& taken, absl::Time now) const {
  const std::string set_name = SetName(g.set_size, server_id);
  if (std::find(set.begin(), set.end(), name) == set.end()) {
    return Refuse(true,
                  absl::StrCat("group ", g.key, " runs on ", set_name, " (", Joined(set),
                               "); this node is not in it"),
                  "us_other_set");
  }
  if (taken.count(name) > 0) {
    return Refuse(true, absl::StrCat("node already runs a pod of group ", g.key), "us_same_node");
  }
  if (std::vector<std::string> h = HoldersLocked(name, g.key, now); !h.empty()) {
    return Refuse(false, absl::StrCat("node of ", set_name, " is held by group ", h.front()),
                  "us_held");
  }
  auto it = nodes_.find(name);
  if (it == nodes_.end() || !it->second.info) {
    return Refuse(false, "node is not in the extender's cache (not synced yet, or deleted)",
                  "unknown_node");
  }
  if (!it->second.info->schedulable) {
    return Refuse(false, absl::StrCat("node of ", set_name, " is not Ready or is cordoned"),
                  "us_set");
  }
  GroupCheck ok;
  ok.ok = true;
  ok.set_name = set_name;
  ok.fit_nodes = {name};
  return ok;
}

std::vector<GroupCheck> ClusterView::CheckGroup(const PodInfo& pod,
                                                const std::vector<std::string_view>& names) const {
  const PodGroup& g = *pod.group;
  const absl::Time now = clock_.Now();
  std::vector<GroupCheck> out;
  out.reserve(names.size());
  absl::ReaderMutexLock lock(&mu_);
  std::string server_id;
  std::vector<std::string> set;
  const bool has_set = GroupSetLocked(g, now, server_id, set);
  const std::set<std::string> taken =
      has_set ? TakenLocked(g.key, pod.Key(), now) : std::set<std::string>{};
  for (std::string_view n : names) {
    const std::string name(n);
    out.push_back(has_set ? CheckInSetLocked(g, name, server_id, set, taken, now)
                          : CheckNewSetLocked(g, name, now));
  }
  return out;
}

std::vector<int> ClusterView::GroupScores(const PodInfo& pod,
                                          const std::vector<std::string_view>& names) const {
  const PodGroup& g = *pod.group;
  std::vector<int> out(names.size(), 10);
  if (g.set_size >= 4) {
    return out;
  }
  const absl::Time now = clock_.Now();
  absl::ReaderMutexLock lock(&mu_);
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string name(names[i]);
    std::string own_id, id4;
    std::vector<std::string> own, whole;
    if (!SetOfLocked(name, g.set_size, own_id, own) || !SetOfLocked(name, 4, id4, whole)) {
      out[i] = 1;
      continue;
    }
    int used = 0;
    for (const std::string& n : whole) {
      const bool mine = std::find(own.begin(), own.end(), n) != own.end();
      if (!n.empty() && !mine && !HoldersLocked(n, g.key, now).empty()) {
        ++used;
      }
    }
    out[i] = std::min(10, 1 + 3 * used);
  }
  return out;
}

absl::StatusOr<ultraserver::Placement> ClusterView::PlaceGroupPod(const PodInfo& pod,
                                                                  const std::string& node,
                                                                  absl::Duration ttl) {
  const PodGroup& g = *pod.group;
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  std::vector<std::string> expired;
  for (const auto& [group, r] : group_res_) {
    if (r.expires <= now) {
      expired.push_back(group);
    }
  }
  for (const std::string& group : expired) {
    EraseGroupReservationLocked(group);
  }
  std::string server_id;
  std::vector<std::string> set;
  if (GroupSetLocked(g, now, server_id, set)) {
    GroupCheck c =
        CheckInSetLocked(g, node, server_id, set, TakenLocked(g.key, pod.Key(), now), now);
    if (!c.ok) {
      return absl::FailedPreconditionError(c.reason);
    }
    if (auto r = group_res_.find(g.key); r != group_res_.end()) {
      r->second.placed[pod.Key()] = node;
    }
  } else {
    GroupCheck c = CheckNewSetLocked(g, node, now);
    if (!c.ok) {
      return absl::FailedPreconditionError(c.reason);
    }
    SetOfLocked(node, g.set_size, server_id, set);
    group_res_[g.key] =
        GroupReservation{g.set_size, server_id, set, {{pod.Key(), node}}, now + ttl};
    for (const std::string& n : set) {
      node_reserved_[n] = g.key;
    }
  }
  ultraserver::Placement p;
  p.member = *nodes_.find(node)->second.info->ultraserver->MemberOf(g.set_size);
  p.rank = std::max(0, p.member.node_id);
  p.rank0_host = set.front();
  return p;
}

void ClusterView::UnplaceGroupPod(const PodInfo& pod) {
  absl::MutexLock lock(&mu_);
  auto r = group_res_.find(pod.group->key);
  if (r == group_res_.end()) {
    return;
  }
  r->second.placed.erase(pod.Key());
  if (r->second.placed.empty()) {
    EraseGroupReservationLocked(pod.group->key);
  }
}

size_t ClusterView::group_reservation_count() const {
  const absl::Time now = clock_.Now();
  absl::ReaderMutexLock lock(&mu_);
  return std::count_if(group_res_.begin(), group_res_.end(),
                       [now](const auto& r) { return r.second.expires > now; });
}

}  // namespace neuron::extender
