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

GroupCheck NoneCheck() {
  return Refuse(true, absl::StrCat("not an UltraServer node (no ", ultraserver::kModeLabel, ")"),
                "us_none");
}

GroupCheck ModeCheck(const PodGroup& g) {
  return Refuse(true,
                absl::StrCat("node supports no UltraServer set of ", g.set_size, " (label ",
                             ultraserver::kModeLabel, ")"),
                "us_mode");
}

GroupCheck RankCheck(const PodGroup& g) {
  return Refuse(true,
                absl::StrCat("not node 0 of an UltraServer set of ", g.set_size,
                             " (a group's first pod goes there)"),
                "us_rank");
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
  ++nodes_[node].group_pods;
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
  if (auto e = nodes_.find(node); e != nodes_.end()) {
    --e->second.group_pods;
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
      if (auto e = nodes_.find(n); e != nodes_.end()) {
        e->second.group_reserved = false;
      }
    }
  }
  group_res_.erase(r);
}

const std::string* ClusterView::HolderLocked(const std::string& node, const std::string& except,
                                             absl::Time now) const {
  if (auto r = node_reserved_.find(node); r != node_reserved_.end() && r->second != except) {
    auto g = group_res_.find(r->second);
    if (g != group_res_.end() && g->second.expires > now) {
      return &r->second;
    }
  }
  if (auto n = node_groups_.find(node); n != node_groups_.end()) {
    for (const auto& [group, count] : n->second) {
      if (group != except) {
        return &group;
      }
    }
  }
  return nullptr;
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

// One CheckGroup call: the group, its set if it has one, and the checks shared by many
// candidates (built once, pointed to by each).
struct ClusterView::GroupPass {
  GroupPass(const PodGroup& group, absl::Time at, std::deque<GroupCheck>& checks)
      : g(group), now(at), pool(checks) {}
  const PodGroup& g;
  absl::Time now;
  std::deque<GroupCheck>& pool;
  bool has_set = false;
  std::string server_id;
  std::vector<std::string> set;
  std::set<std::string> taken;
  // Checks many candidates share, made on first use.
  const GroupCheck* unknown_node = nullptr;
  const GroupCheck* us_none = nullptr;
  const GroupCheck* us_mode = nullptr;
  const GroupCheck* us_rank = nullptr;
  const GroupCheck* us_other_set = nullptr;

  const GroupCheck* Add(GroupCheck c) { return &pool.emplace_back(std::move(c)); }
  // The shared check in `slot`, made by `make` on first use.
  template <typename Make>
  const GroupCheck* Shared(const GroupCheck*& slot, Make&& make) {
    if (slot == nullptr) {
      slot = Add(make());
    }
    return slot;
  }
};

const std::vector<std::string>* ClusterView::IndexedSetLocked(const NodeInfo& info, int size,
                                                              const std::string*& server_id) const {
  const ultraserver::Identity& id = *info.ultraserver;
  const std::string& server = id.trn3     ? id.reservation_id
                              : size == 4 ? id.server_id_4
                                          : id.server_id_2;
  const int node = id.trn3 ? id.node_id : size == 4 ? id.node_id_4 : id.node_id_2;
  if (size < 2 || server.empty() || node < 0 || node >= size) {
    return nullptr;
  }
  const SetIndex& index = size == 2 ? sets2_ : sets4_;
  auto s = index.find(server);
  if (s == index.end() || static_cast<int>(s->second.size()) <= node ||
      s->second[node] != info.name) {
    return nullptr;
  }
  server_id = &s->first;
  return &s->second;
}

const GroupCheck* ClusterView::SetProblemLocked(GroupPass& pass, const std::string& server_id,
                                                const std::vector<std::string>& nodes) const {
  const PodGroup& g = pass.g;
  auto problem = [&](std::string reason) {
    return pass.Add(Refuse(false, std::move(reason), "us_set"));
  };
  for (const std::string& n : nodes) {
    auto it = n.empty() ? nodes_.end() : nodes_.find(n);
    if (it == nodes_.end() || !it->second.info) {
      return problem(absl::StrCat(SetName(g.set_size, server_id), " has a node (",
                                  n.empty() ? "?" : n, ") the cluster does not show"));
    }
    const NodeInfo& info = *it->second.info;
    if (!info.schedulable) {
      return problem(absl::StrCat("node ", n, " of ", SetName(g.set_size, server_id),
                                  " is not Ready or is cordoned"));
    }
    if (!info.FullyAllocatable()) {
      return problem(absl::StrCat("node ", n, " of ", SetName(g.set_size, server_id),
                                  " reports unhealthy Neuron devices (allocatable ",
                                  info.alloc_devices, " devices, ", info.alloc_cores, " cores)"));
    }
    if (it->second.group_pods == 0 && !it->second.group_reserved) {
      continue;  // held by no group: no need to look further
    }
    if (const std::string* h = HolderLocked(n, g.key, pass.now)) {
      return problem(absl::StrCat(SetName(g.set_size, server_id), " is held by group ", *h));
    }
  }
  return nullptr;
}

const GroupCheck* ClusterView::CheckNewSetLocked(GroupPass& pass, const std::string& name) const {
  const PodGroup& g = pass.g;
  auto it = nodes_.find(name);
  if (it == nodes_.end() || !it->second.info) {
    return pass.Shared(pass.unknown_node, [] {
      return Refuse(false, "node is not in the extender's cache (not synced yet, or deleted)",
                    "unknown_node");
    });
  }
  const NodeInfo& info = *it->second.info;
  if (!info.ultraserver) {
    return pass.Shared(pass.us_none, [&] {
      return Refuse(true,
                    absl::StrCat("not an UltraServer node (no ", ultraserver::kModeLabel, ")"),
                    "us_none");
    });
  }
  const ultraserver::Identity& id = *info.ultraserver;
  if (id.ModeForSize(g.set_size) == ultraserver::Mode::kUnset) {
    return pass.Shared(pass.us_mode, [&] { return ModeCheck(g); });
  }
  // Most candidates are not node 0 of their set: answered from the identity, no lookup.
  const int node_id = id.trn3 ? id.node_id : g.set_size == 4 ? id.node_id_4 : id.node_id_2;
  if (g.set_size > 1 && node_id != 0) {
    return pass.Shared(pass.us_rank, [&] { return RankCheck(g); });
  }
  const std::string* server_id = &name;
  const std::vector<std::string>* indexed = IndexedSetLocked(info, g.set_size, server_id);
  if (g.set_size > 1 && indexed == nullptr) {
    return pass.Add(
        Refuse(true,
               absl::StrCat("node has no complete ", ultraserver::ServerIdLabel(g.set_size), " / ",
                            ultraserver::NodeIdLabel(g.set_size), " labels"),
               "us_mode"));
  }
  GroupCheck ok;
  if (indexed == nullptr) {
    ok.fit_nodes = {name};  // a set of 1: the node itself (its own verdict names it)
  } else {
    ok.fit_nodes = *indexed;
    ok.set_name = SetName(g.set_size, *server_id);
  }
  if (static_cast<int>(ok.fit_nodes.size()) < g.set_size) {
    return pass.Add(
        Refuse(false, absl::StrCat(SetName(g.set_size, *server_id), " is incomplete"), "us_set"));
  }
  if (const GroupCheck* p = SetProblemLocked(pass, *server_id, ok.fit_nodes)) {
    return p;
  }
  ok.ok = true;
  return pass.Add(std::move(ok));
}

const GroupCheck* ClusterView::CheckInSetLocked(GroupPass& pass, const std::string& name) const {
  const PodGroup& g = pass.g;
  const std::string set_name = SetName(g.set_size, pass.server_id);
  if (std::find(pass.set.begin(), pass.set.end(), name) == pass.set.end()) {
    return pass.Shared(pass.us_other_set, [&] {
      return Refuse(true,
                    absl::StrCat("group ", g.key, " runs on ", set_name, " (", Joined(pass.set),
                                 "); this node is not in it"),
                    "us_other_set");
    });
  }
  if (pass.taken.count(name) > 0) {
    return pass.Add(
        Refuse(true, absl::StrCat("node already runs a pod of group ", g.key), "us_same_node"));
  }
  if (const std::string* h = HolderLocked(name, g.key, pass.now)) {
    return pass.Add(
        Refuse(false, absl::StrCat("node of ", set_name, " is held by group ", *h), "us_held"));
  }
  auto it = nodes_.find(name);
  if (it == nodes_.end() || !it->second.info) {
    return pass.Add(Refuse(
        false, "node is not in the extender's cache (not synced yet, or deleted)", "unknown_node"));
  }
  if (!it->second.info->schedulable) {
    return pass.Add(Refuse(
        false, absl::StrCat("node of ", set_name, " is not Ready or is cordoned"), "us_set"));
  }
  GroupCheck ok;
  ok.ok = true;
  ok.set_name = set_name;
  ok.fit_nodes = {name};
  return pass.Add(std::move(ok));
}

GroupChecks ClusterView::CheckGroup(const PodInfo& pod,
                                    const std::vector<std::string_view>& names) const {
  GroupChecks out;
  GroupPass pass(*pod.group, clock_.Now(), out.pool);
  const PodGroup& g = pass.g;
  out.of.reserve(names.size());
  absl::ReaderMutexLock lock(&mu_);
  pass.has_set = GroupSetLocked(g, pass.now, pass.server_id, pass.set);
  if (pass.has_set) {
    pass.taken = TakenLocked(g.key, pod.Key(), pass.now);
  }
  // Thousands of table probes, mostly cache misses: prefetched all at once (as Snapshots
  // does), then most candidates of a new group are refused from the compact fields alone.
  std::vector<size_t> hashes(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    hashes[i] = nodes_.hash_function()(names[i]);
    nodes_.prefetch(names[i]);
  }
  const uint8_t size_bit = static_cast<uint8_t>(1U << g.set_size);
  std::string name;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!pass.has_set) {
      auto it = nodes_.find(names[i], hashes[i]);
      const NodeInfo* info = it != nodes_.end() && it->second.info ? &*it->second.info : nullptr;
      if (info != nullptr && !info->ultraserver) {
        out.of.push_back(pass.Shared(pass.us_none, [] { return NoneCheck(); }));
        continue;
      }
      if (info != nullptr && (info->us_sizes & size_bit) == 0) {
        out.of.push_back(pass.Shared(pass.us_mode, [&] { return ModeCheck(g); }));
        continue;
      }
      const int id = g.set_size == 4 ? info ? info->us_node_id4 : 0 : info ? info->us_node_id2 : 0;
      if (g.set_size > 1 && id > 0) {
        out.of.push_back(pass.Shared(pass.us_rank, [&] { return RankCheck(g); }));
        continue;
      }
    }
    name.assign(names[i].data(), names[i].size());
    out.of.push_back(pass.has_set ? CheckInSetLocked(pass, name) : CheckNewSetLocked(pass, name));
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
  std::string name;
  for (size_t i = 0; i < names.size(); ++i) {
    name.assign(names[i].data(), names[i].size());
    auto it = nodes_.find(name);
    const std::string* id4 = nullptr;
    const std::string* own_id = nullptr;
    const std::vector<std::string>* whole = nullptr;
    const std::vector<std::string>* own = nullptr;
    if (it != nodes_.end() && it->second.info && it->second.info->ultraserver) {
      whole = IndexedSetLocked(*it->second.info, 4, id4);
      own = IndexedSetLocked(*it->second.info, g.set_size, own_id);
    }
    if (whole == nullptr) {
      out[i] = 1;
      continue;
    }
    int used = 0;
    for (const std::string& n : *whole) {
      const bool mine = n == name || (own && std::find(own->begin(), own->end(), n) != own->end());
      if (!n.empty() && !mine && HolderLocked(n, g.key, now) != nullptr) {
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
  std::deque<GroupCheck> pool;
  GroupPass pass(g, now, pool);
  std::string& server_id = pass.server_id;
  std::vector<std::string>& set = pass.set;
  if (GroupSetLocked(g, now, server_id, set)) {
    pass.taken = TakenLocked(g.key, pod.Key(), now);
    const GroupCheck* c = CheckInSetLocked(pass, node);
    if (!c->ok) {
      return absl::FailedPreconditionError(c->reason);
    }
    if (auto r = group_res_.find(g.key); r != group_res_.end()) {
      r->second.placed[pod.Key()] = node;
    }
  } else {
    const GroupCheck* c = CheckNewSetLocked(pass, node);
    if (!c->ok) {
      return absl::FailedPreconditionError(c->reason);
    }
    SetOfLocked(node, g.set_size, server_id, set);
    group_res_[g.key] =
        GroupReservation{g.set_size, server_id, set, {{pod.Key(), node}}, now + ttl};
    for (const std::string& n : set) {
      node_reserved_[n] = g.key;
      nodes_[n].group_reserved = true;
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
