// File: lib/extender/cluster_view.cc
#include "lib/extender/cluster_view.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/topology/topology.h"

namespace neuron::extender {
namespace {

// Marks taken IDs and derives the free views of both kinds.
struct Occupancy {
  const topology::NodeTopology& t;
  std::vector<bool> dev_taken, core_taken;

  explicit Occupancy(const topology::NodeTopology& topo)
      : t(topo),
        dev_taken(topo.devices, false),
        core_taken(topo.devices * topo.cores_per_device, false) {}

  void Mark(ResourceKind kind, const std::vector<int>& ids) {
    std::vector<bool>& v = kind == ResourceKind::kDevice ? dev_taken : core_taken;
    for (int id : ids) {
      if (id >= 0 && id < static_cast<int>(v.size())) v[id] = true;
    }
  }
  std::vector<bool> FreeDevices() const {
    std::vector<bool> f(t.devices);
    for (int d = 0; d < t.devices; ++d) {
      bool any_core = false;
      for (int c = d * t.cores_per_device; c < (d + 1) * t.cores_per_device; ++c) {
        any_core = any_core || core_taken[c];
      }
      f[d] = !dev_taken[d] && !any_core;
    }
    return f;
  }
  std::vector<bool> FreeCores() const {
    std::vector<bool> f(core_taken.size());
    for (size_t c = 0; c < f.size(); ++c) {
      f[c] = !core_taken[c] && !dev_taken[c / t.cores_per_device];
    }
    return f;
  }
  // An unannotated holding: what the shared choice would give it, else the lowest free IDs.
  void MarkUnknown(ResourceKind kind, int64_t count) {
    const bool dev = kind == ResourceKind::kDevice;
    const std::vector<bool> free = dev ? FreeDevices() : FreeCores();
    const int n = static_cast<int>(std::min<int64_t>(count, static_cast<int64_t>(free.size())));
    std::optional<std::vector<int>> ids =
        dev ? topology::ChooseDevices(t, free, n) : topology::ChooseCores(t, free, n);
    if (!ids) {
      ids.emplace();
      for (int i = 0; i < static_cast<int>(free.size()) && static_cast<int>(ids->size()) < n; ++i) {
        if (free[i]) ids->push_back(i);
      }
    }
    Mark(kind, *ids);
  }
};

}  // namespace

absl::StatusOr<std::pair<ResourceKind, int>> RequestKind(const NeuronRequest& r) {
  if (r.devices > 0 && r.cores > 0) {
    return absl::InvalidArgumentError(
        "pod requests both aws.amazon.com/neuron and aws.amazon.com/neuroncore; request one");
  }
  if (r.devices > 0) return std::pair{ResourceKind::kDevice, static_cast<int>(r.devices)};
  return std::pair{ResourceKind::kCore, static_cast<int>(r.cores)};
}

ClusterView::ClusterView(Clock* clock) : clock_(clock ? *clock : Clock::Real()) {}

void ClusterView::UpsertNode(const nlohmann::json& node) { UpsertNode(ParseNode(node)); }

void ClusterView::UpsertNode(NodeInfo info) {
  if (info.name.empty()) return;
  absl::MutexLock lock(&mu_);
  UpsertNodeLocked(std::move(info));
}

void ClusterView::UpsertNodeLocked(NodeInfo info) {
  const std::string name = info.name;
  NodeEntry& e = nodes_[name];
  if (e.info && e.info->ultraserver) {
    IndexNodeLocked(name, nullptr);
  }
  e.info = std::move(info);
  e.group_reserved = node_reserved_.count(name) > 0;  // a node that left and came back
  if (e.info->ultraserver) {
    IndexNodeLocked(name, &*e.info);
  }
  InvalidateLocked(name);
}

void ClusterView::InvalidateLocked(const std::string& node) {
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return;
  absl::MutexLock lock(&cache_mu_);
  it->second.cached.reset();
}

void ClusterView::EraseReservationLocked(const std::string& id) {
  auto it = reservations_.find(id);
  if (it == reservations_.end()) return;
  InvalidateLocked(it->second.node);
  reservations_.erase(it);
}

void ClusterView::DeleteNode(const std::string& name) {
  absl::MutexLock lock(&mu_);
  DeleteNodeLocked(name);
}

void ClusterView::DeleteNodeLocked(const std::string& name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  if (it->second.info && it->second.info->ultraserver) {
    IndexNodeLocked(name, nullptr);
  }
  it->second.info.reset();
  InvalidateLocked(name);
  if (it->second.pods.empty()) nodes_.erase(it);
}

void ClusterView::ReplaceNodes(std::vector<NodeInfo> nodes) {
  std::set<std::string> listed;
  for (const NodeInfo& n : nodes) listed.insert(n.name);
  absl::MutexLock lock(&mu_);
  std::vector<std::string> gone;
  for (const auto& [name, entry] : nodes_) {
    if (entry.info && listed.count(name.str()) == 0) gone.push_back(name.str());
  }
  for (const std::string& name : gone) DeleteNodeLocked(name);
  for (NodeInfo& n : nodes) {
    if (!n.name.empty()) UpsertNodeLocked(std::move(n));
  }
}

void ClusterView::RemovePodLocked(const std::string& key) {
  pending_.erase(key);
  UntrackGroupPodLocked(key);
  auto it = pod_node_.find(key);
  if (it == pod_node_.end()) return;
  auto n = nodes_.find(it->second);
  if (n != nodes_.end()) {
    InvalidateLocked(it->second);
    n->second.pods.erase(key);
    if (n->second.pods.empty() && !n->second.info) nodes_.erase(n);
  }
  pod_node_.erase(it);
}

PodHoldings HoldingsFor(const PodInfo& p) {
  PodHoldings out{p.Key(), p.uid, p.node_name, {}, {}, {}, {}};
  if (p.Terminated() || !p.request.Any()) return out;
  out.group = p.group;
  if (p.node_name.empty()) {
    out.pending = p.request;
    out.scheduler_name = p.scheduler_name;
    return out;
  }
  for (auto [kind, count] : {std::pair{ResourceKind::kDevice, p.request.devices},
                             std::pair{ResourceKind::kCore, p.request.cores}}) {
    if (count <= 0) continue;
    Holding h{out.key, p.uid, kind, {}, count, false};
    if (p.assignment && p.assignment->kind == kind && !p.assignment->ids.empty()) {
      h.ids = p.assignment->ids;
      h.count = static_cast<int64_t>(h.ids.size());
      h.known = true;
    }
    out.holdings.push_back(std::move(h));
  }
  return out;
}

void ClusterView::UpsertPod(const nlohmann::json& pod) {
  absl::StatusOr<PodInfo> p = ParsePod(pod);
  if (!p.ok()) return;  // the API server validated it; nothing we could count
  ApplyPod(HoldingsFor(*p));
}

void ClusterView::ApplyPod(PodHoldings pod) {
  absl::MutexLock lock(&mu_);
  ApplyPodLocked(std::move(pod));
}

void ClusterView::ApplyPodLocked(PodHoldings pod) {
  RemovePodLocked(pod.key);
  if (pod.pending.Any()) {
    pending_[pod.key] = PendingPod{pod.uid, pod.pending, pod.scheduler_name, pod.group};
  }
  if (pod.holdings.empty()) return;
  if (pod.group && pod.group->error.empty()) {
    TrackGroupPodLocked(pod.key, pod.group->key, pod.node);
  }
  // The watch now shows the IDs the bind wrote: the reservation has done its job.
  if (std::any_of(pod.holdings.begin(), pod.holdings.end(),
                  [](const Holding& h) { return h.known; })) {
    EraseReservationLocked(pod.uid.empty() ? pod.key : pod.uid);
  }
  pod_node_[pod.key] = pod.node;
  nodes_[pod.node].pods[pod.key] = std::move(pod.holdings);
  InvalidateLocked(pod.node);
}

void ClusterView::ReplacePods(std::vector<PodHoldings> pods) {
  std::set<std::string> listed;
  for (const PodHoldings& p : pods) {
    if (!p.holdings.empty()) listed.insert(p.key);
  }
  absl::MutexLock lock(&mu_);
  std::vector<std::string> gone;
  for (const auto& [key, node] : pod_node_) {
    if (listed.count(key) == 0) gone.push_back(key);
  }
  for (const std::string& key : gone) RemovePodLocked(key);
  pending_.clear();
  for (PodHoldings& p : pods) {
    if (!p.holdings.empty() || p.pending.Any()) ApplyPodLocked(std::move(p));
  }
}

void ClusterView::DeletePod(const nlohmann::json& pod) {
  absl::StatusOr<PodInfo> p = ParsePod(pod);
  if (!p.ok()) return;
  RemovePod(p->Key(), p->uid);
}

void ClusterView::RemovePod(const std::string& key, const std::string& uid) {
  absl::MutexLock lock(&mu_);
  RemovePodLocked(key);
  EraseReservationLocked(uid.empty() ? key : uid);
}

std::optional<NodeState> ClusterView::StateLocked(const std::string& node,
                                                  const std::string& exclude_pod,
                                                  const std::set<std::string>* exclude_uids,
                                                  absl::Time now, bool with_holdings) const {
  auto it = nodes_.find(node);
  if (it == nodes_.end() || !it->second.info) return std::nullopt;
  NodeState st;
  st.info = *it->second.info;
  if (!st.info.shape) return st;
  Occupancy occ(st.info.shape->topo);
  std::vector<const Holding*> unknown;
  for (const auto& [key, hs] : it->second.pods) {
    if (key == exclude_pod) continue;
    for (const Holding& h : hs) {
      if (exclude_uids && exclude_uids->count(h.uid)) continue;
      if (with_holdings) st.holdings.push_back(h);
      if (h.known) {
        occ.Mark(h.kind, h.ids);
      } else {
        unknown.push_back(&h);
      }
    }
  }
  for (const auto& [uid, r] : reservations_) {
    if (r.node != node || r.expires <= now || r.pod == exclude_pod) continue;
    if (exclude_uids && exclude_uids->count(uid)) continue;
    auto held = it->second.pods.find(r.pod);
    // clang 14 cannot capture a structured binding in a lambda: name the kind first.
    const auto kind = r.choice.kind;
    const bool shown = held != it->second.pods.end() &&
                       std::any_of(held->second.begin(), held->second.end(),
                                   [kind](const Holding& h) { return h.known && h.kind == kind; });
    if (shown) continue;
    occ.Mark(r.choice.kind, r.choice.ids);
    if (with_holdings) {
      st.holdings.push_back(Holding{r.pod, uid, r.choice.kind, r.choice.ids,
                                    static_cast<int64_t>(r.choice.ids.size()), true});
    }
  }
  for (const Holding* h : unknown) {
    occ.MarkUnknown(h->kind, h->count);
    (h->kind == ResourceKind::kDevice ? st.unknown_devices : st.unknown_cores) += h->count;
  }
  st.free_devices = occ.FreeDevices();
  st.free_cores = occ.FreeCores();
  return st;
}

std::optional<NodeState> ClusterView::State(const std::string& node, const std::string& exclude_pod,
                                            const std::set<std::string>* exclude_uids) const {
  const absl::Time now = clock_.Now();
  absl::ReaderMutexLock lock(&mu_);
  return StateLocked(node, exclude_pod, exclude_uids, now);
}

std::shared_ptr<const NodeState> ClusterView::Snapshot(const std::string& node,
                                                       const std::string& exclude_pod) const {
  return Snapshots({node}, exclude_pod).front();
}

std::vector<std::shared_ptr<const NodeState>> ClusterView::Snapshots(
    const std::vector<std::string_view>& names, const std::string& exclude_pod) const {
  const absl::Time now = clock_.Now();
  std::vector<std::shared_ptr<const NodeState>> out(names.size());
  absl::ReaderMutexLock lock(&mu_);
  // The cache holds each state with nothing excluded; where the excluded pod holds or reserves
  // something (a bind retry), the node needs a state of its own. Live reservations also bound
  // how long a cached state stays valid.
  std::string_view holds_on;
  if (!exclude_pod.empty()) {
    if (auto it = pod_node_.find(exclude_pod); it != pod_node_.end()) holds_on = it->second;
  }
  struct Reserved {
    absl::Time until = absl::InfiniteFuture();
    bool excluded = false;
  };
  absl::flat_hash_map<std::string_view, Reserved> reserved;
  for (const auto& [uid, r] : reservations_) {
    if (r.expires <= now) continue;
    Reserved& here = reserved[r.node];
    here.until = std::min(here.until, r.expires);
    here.excluded = here.excluded || (!exclude_pod.empty() && r.pod == exclude_pod);
  }
  const auto own_state = [&](std::string_view name) {
    if (!holds_on.empty() && name == holds_on) return true;
    if (reserved.empty()) return false;
    const auto r = reserved.find(name);
    return r != reserved.end() && r->second.excluded;
  };
  // Hundreds of lookups in a table of thousands of entries, mostly cache misses. Each step
  // below touches memory the one before it prefetched for all names, so the misses overlap
  // instead of following one another: the table's control bytes, the slot (key and cache),
  // then each cached state's reference count.
  std::vector<size_t> hashes(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    hashes[i] = nodes_.hash_function()(names[i]);
    nodes_.prefetch(names[i]);
  }
  std::vector<const NodeEntry*> hits(names.size(), nullptr);  // cached state still valid
  std::vector<std::pair<size_t, const NodeEntry*>> fresh;     // state must be computed
  {
    absl::MutexLock cl(&cache_mu_);
    for (size_t i = 0; i < names.size(); ++i) {
      auto it = nodes_.find(names[i], hashes[i]);
      if (it == nodes_.end()) continue;
      const NodeEntry& e = it->second;
      if (e.cached && now < e.cached_until && !own_state(names[i])) {
        hits[i] = &e;
        // A hint only: libstdc++'s make_shared keeps the count 16 bytes before the state.
        __builtin_prefetch(reinterpret_cast<const char*>(e.cached.get()) - 16, 1);
      } else if (e.info) {
        fresh.emplace_back(i, &e);
      }
    }
    for (size_t i = 0; i < names.size(); ++i) {
      if (hits[i]) out[i] = hits[i]->cached;
    }
  }
  for (const auto& [i, entry] : fresh) {
    const std::string name(names[i]);
    const auto r = reserved.find(names[i]);
    const bool own = own_state(names[i]);
    std::optional<NodeState> st = StateLocked(name, own ? exclude_pod : "", nullptr, now);
    if (!st) continue;
    st->memo = std::make_shared<DecisionMemo>();
    out[i] = std::make_shared<const NodeState>(std::move(*st));
    if (own) continue;
    absl::MutexLock cl(&cache_mu_);
    entry->cached = out[i];
    entry->cached_until = r == reserved.end() ? absl::InfiniteFuture() : r->second.until;
  }
  return out;
}

absl::StatusOr<Choice> ClusterView::ChooseAndReserve(const std::string& node, const PodInfo& pod,
                                                     absl::Duration ttl) {
  absl::StatusOr<std::pair<ResourceKind, int>> want = RequestKind(pod.request);
  if (!want.ok()) return want.status();
  const std::string id = pod.uid.empty() ? pod.Key() : pod.uid;
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  std::vector<std::string> expired;
  for (const auto& [rid, r] : reservations_) {
    if (r.expires <= now) expired.push_back(rid);
  }
  for (const std::string& rid : expired) EraseReservationLocked(rid);
  if (auto it = reservations_.find(id); it != reservations_.end()) {
    if (it->second.node == node) return it->second.choice;
    EraseReservationLocked(id);  // the scheduler moved the pod: the old choice is void
  }
  std::optional<NodeState> st = StateLocked(node, pod.Key(), nullptr, now);
  if (!st) return absl::NotFoundError(absl::StrCat("node ", node, " is not known"));
  if (!st->info.shape) {
    return absl::FailedPreconditionError(absl::StrCat("node ", node, " has no Neuron devices"));
  }
  const auto [kind, count] = *want;
  const topology::NodeTopology& t = st->info.shape->topo;
  std::optional<std::vector<int>> ids = kind == ResourceKind::kDevice
                                            ? topology::ChooseDevices(t, st->free_devices, count)
                                            : topology::ChooseCores(t, st->free_cores, count);
  if (!ids) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no valid set of ", count, " ", assignment::ShortName(kind), " IDs is free on ", node));
  }
  Choice c{kind, std::move(*ids)};
  reservations_[id] = Reservation{node, pod.Key(), c, now + ttl};
  InvalidateLocked(node);
  return c;
}

void ClusterView::Release(const std::string& pod_uid) {
  absl::MutexLock lock(&mu_);
  EraseReservationLocked(pod_uid);
}

std::optional<nlohmann::json> ClusterView::DebugNode(const std::string& node) const {
  std::optional<NodeState> st;
  {
    const absl::Time now = clock_.Now();
    absl::ReaderMutexLock lock(&mu_);
    st = StateLocked(node, "", nullptr, now, /*with_holdings=*/true);
  }
  if (!st) return std::nullopt;
  auto indices = [](const std::vector<bool>& v) {
    std::vector<int> out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i]) out.push_back(static_cast<int>(i));
    }
    return assignment::FormatRanges(out);
  };
  nlohmann::json j = {{"name", node}, {"source", st->info.source}};
  if (st->info.shape) {
    const ShapeModel& m = *st->info.shape;
    j["shape"] = m.name;
    j["lnc"] = m.lnc;
    j["devices"] = m.topo.devices;
    j["cores_per_device"] = m.topo.cores_per_device;
    j["device_counts"] = m.DeviceCountsText();
  }
  j["allocatable"] = {{"neuron", st->info.alloc_devices}, {"neuroncore", st->info.alloc_cores}};
  j["free_devices"] = indices(st->free_devices);
  j["free_cores"] = indices(st->free_cores);
  j["unknown_devices"] = st->unknown_devices;
  j["unknown_cores"] = st->unknown_cores;
  nlohmann::json holders = nlohmann::json::array();
  for (const Holding& h : st->holdings) {
    holders.push_back({{"pod", h.pod},
                       {"kind", assignment::ShortName(h.kind)},
                       {"ids", h.known ? assignment::FormatRanges(h.ids) : "unknown"},
                       {"count", h.count}});
  }
  j["holders"] = std::move(holders);
  return j;
}

std::optional<PendingPod> ClusterView::Pending(const std::string& key) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = pending_.find(key);
  if (it == pending_.end()) return std::nullopt;
  return it->second;
}

size_t ClusterView::node_count() const {
  absl::ReaderMutexLock lock(&mu_);
  return nodes_.size();
}
size_t ClusterView::pod_count() const {
  absl::ReaderMutexLock lock(&mu_);
  return pod_node_.size();
}
size_t ClusterView::reservation_count() const {
  absl::ReaderMutexLock lock(&mu_);
  return reservations_.size();
}

}  // namespace neuron::extender
