// File: lib/extender/cluster_view.h
// The extender's typed, compact picture of the cluster, fed by Node and Pod watches and rebuilt
// from the API after a restart (nothing is stored on nodes). Per node: its NodeInfo and what
// each non-terminated pod bound there holds, read from AWS_NEURON_IDS / NEURON_RESOURCE_TYPE.
// A pod that holds Neuron resources without those annotations holds unknown IDs: we assume the
// device plugin gave it what the shared best-fit choice picks on the free IDs, and count it
// against capacity either way. Both resources are one piece of silicon: a device held as
// `neuron` has no free cores, and a device with any core held is not a free `neuron`.
//
// Bind reservations live here too, so choice and reservation are one atomic step: a reserved
// set stays taken until the watch shows the pod's annotation or the reservation expires.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lib/assignment/ids.h"
#include "lib/base/clock.h"
#include "lib/extender/decision_memo.h"
#include "lib/extender/node.h"
#include "lib/extender/node_key.h"
#include "lib/extender/pod.h"
#include "lib/ultraserver/runtime_env.h"
#include "nlohmann/json.hpp"

namespace neuron::extender {

using assignment::ResourceKind;

// What one pod holds (of one kind) on one node.
struct Holding {
  std::string pod;  // "ns/name"
  std::string uid;
  ResourceKind kind = ResourceKind::kDevice;
  std::vector<int> ids;  // empty when unknown
  int64_t count = 0;
  bool known = false;
};

// One node's state as the decisions see it.
struct NodeState {
  NodeInfo info;
  std::vector<bool> free_devices;  // free as `neuron` (no core of the device held)
  std::vector<bool> free_cores;    // free as `neuroncore` (device not held as `neuron`)
  int64_t unknown_devices = 0, unknown_cores = 0;  // held without annotations
  std::vector<Holding> holdings;                   // including live reservations
  std::shared_ptr<DecisionMemo> memo;  // set on Snapshot()s only: they are never modified
};

// The IDs of one bind: which kind and which indices.
struct Choice {
  ResourceKind kind = ResourceKind::kDevice;
  std::vector<int> ids;
};

// What the view keeps of one pod: its key and node and what it holds there (nothing for pods
// that are unbound, terminated or ask for no Neuron resource).
struct PodHoldings {
  std::string key;  // "ns/name"
  std::string uid;
  std::string node;
  std::vector<Holding> holdings;
  NeuronRequest pending{};          // a live pod that waits for a node: what it asks for
  std::string scheduler_name{};     // of a pending pod: who may bind it
  std::optional<PodGroup> group{};  // the pod's UltraServer group, if any
};
PodHoldings HoldingsFor(const PodInfo& pod);

// A live, unbound pod that asks for Neuron resources, as the watch last showed it: what bind
// needs to know of the pod, so that binding costs no GET.
struct PendingPod {
  std::string uid;
  NeuronRequest request;
  std::string scheduler_name;
  std::optional<PodGroup> group{};
};

// One candidate's standing for a pod of an UltraServer group, as far as the view decides it
// under its lock (group_decide.h adds whether each node of the set fits the pod's request).
struct GroupCheck {
  bool ok = false;
  bool unresolvable = false;
  std::string reason;
  const char* category = "";
  std::string set_name;                // "UltraServer set <id>" or "node <name>" (N = 1)
  std::vector<std::string> fit_nodes;  // when ok: each must fit the pod's request
};

// CheckGroup's answer: one check per name, shared where the reason is the same (most
// candidates fail for one of a few reasons; a filter at 5,000 nodes must not build 5,000).
struct GroupChecks {
  std::deque<GroupCheck> pool;
  std::vector<const GroupCheck*> of;
};

// The kind and count a request asks for; InvalidArgument when it asks both kinds.
absl::StatusOr<std::pair<ResourceKind, int>> RequestKind(const NeuronRequest& r);

class ClusterView {
 public:
  explicit ClusterView(Clock* clock = nullptr);

  // Typed updates, as the list+watch feed (view_feed.h) delivers them.
  void UpsertNode(NodeInfo info);
  void DeleteNode(const std::string& name);
  void ApplyPod(PodHoldings pod);  // no holdings: the pod holds nothing (any more)
  void RemovePod(const std::string& key, const std::string& uid);
  // A full list: the complete set of nodes / pods; whatever the view knew and the list lacks
  // is gone (a relist after a 410 must not keep pods deleted while the watch was down).
  void ReplaceNodes(std::vector<NodeInfo> nodes);
  void ReplacePods(std::vector<PodHoldings> pods);

  // The same from API objects (tests, tools).
  void UpsertNode(const nlohmann::json& node);
  void UpsertPod(const nlohmann::json& pod);
  void DeletePod(const nlohmann::json& pod);

  // State of `node` with pod `exclude_pod` ("ns/name") and its reservation left out (a bind
  // retry must not count the pod against itself). nullopt: node unknown.
  // Pods whose UID is in `exclude_uids` are left out too (preemption victims).
  std::optional<NodeState> State(const std::string& node, const std::string& exclude_pod = "",
                                 const std::set<std::string>* exclude_uids = nullptr) const;

  // The same state, shared and cached until the node, its pods or its reservations change
  // (filter and prioritize ask for thousands of nodes per second; most did not change).
  // `exclude_pod` as for State(); null: node unknown.
  std::shared_ptr<const NodeState> Snapshot(const std::string& node,
                                            const std::string& exclude_pod = "") const;
  // Snapshot() of each of `nodes` (null where unknown), in their order: one lock and one pass
  // over the reservations for a whole filter or prioritize call.
  std::vector<std::shared_ptr<const NodeState>> Snapshots(
      const std::vector<std::string_view>& nodes, const std::string& exclude_pod = "") const;

  // Best-fit choice for `pod` on `node` (lib/topology, as the device plugin chooses), reserved
  // until the pod shows the IDs or `ttl` passes. A live reservation of the same pod on the same
  // node is returned as is (retries are idempotent). FailedPrecondition when nothing fits,
  // NotFound for an unknown node.
  absl::StatusOr<Choice> ChooseAndReserve(const std::string& node, const PodInfo& pod,
                                          absl::Duration ttl);
  void Release(const std::string& pod_uid);

  // The pod "ns/name" if the watch shows it unbound, live and asking for Neuron resources.
  std::optional<PendingPod> Pending(const std::string& key) const;

  // The node's shape, free devices and cores, and who holds what.
  std::optional<nlohmann::json> DebugNode(const std::string& node) const;

  // --- UltraServer groups (pod_group.h). Sets come from the nodes' identity labels, indexed
  // by server id as nodes change; a set is held by a group that reserved it (its first bind,
  // until all N pods are seen bound or `ttl` passes) or has a live pod on one of its nodes.
  // The standing of each of `names` for group pod `pod` (its group must be valid).
  GroupChecks CheckGroup(const PodInfo& pod, const std::vector<std::string_view>& names) const;
  // Prioritize for a group pod: 1..10, higher where the node's UltraServer is already in use
  // by other groups (small sets packed, whole UltraServers kept free); 10 for sets of 4.
  std::vector<int> GroupScores(const PodInfo& pod,
                               const std::vector<std::string_view>& names) const;
  // Bind's step for a group pod: checks `node` once more under the lock, reserves the set
  // when this is the group's first pod, records the pod as placed there and returns where it
  // runs. FailedPrecondition when the node is not (any more) the group's to take.
  absl::StatusOr<ultraserver::Placement> PlaceGroupPod(const PodInfo& pod, const std::string& node,
                                                       absl::Duration ttl);
  // Undoes PlaceGroupPod after a failed bind (the reservation goes when nothing else is placed).
  void UnplaceGroupPod(const PodInfo& pod);
  size_t group_reservation_count() const;

  size_t node_count() const;
  size_t pod_count() const;  // pods holding Neuron resources
  size_t reservation_count() const;

 private:
  struct Reservation {
    std::string node, pod;
    Choice choice;
    absl::Time expires;
  };
  struct GroupReservation {
    int size = 0;
    std::string server_id;
    std::vector<std::string> nodes;             // by node id
    std::map<std::string, std::string> placed;  // pod key -> node, by bind
    absl::Time expires;
  };
  // The set of `size` that `node` belongs to: its name and its nodes by node id ("" where
  // unknown); false when the node has no such set.
  bool SetOfLocked(const std::string& node, int size, std::string& server_id,
                   std::vector<std::string>& nodes) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The same without copies, from the index: null when the node has no set of `size` > 1.
  const std::vector<std::string>* IndexedSetLocked(const NodeInfo& info, int size,
                                                   const std::string*& server_id) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void IndexNodeLocked(const std::string& name, const NodeInfo* info)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void TrackGroupPodLocked(const std::string& key, const std::string& group,
                           const std::string& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UntrackGroupPodLocked(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EraseGroupReservationLocked(const std::string& group) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A group other than `except` that holds `node` (its live reservation, its live pods); null
  // when none.
  const std::string* HolderLocked(const std::string& node, const std::string& except,
                                  absl::Time now) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The set group `g` occupies: reserved, else where its live pods run. False: none yet.
  bool GroupSetLocked(const PodGroup& g, absl::Time now, std::string& server_id,
                      std::vector<std::string>& nodes) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Nodes where pods of `group` other than `pod` run or were placed by bind.
  std::set<std::string> TakenLocked(const std::string& group, const std::string& pod,
                                    absl::Time now) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  struct GroupPass;  // one CheckGroup call's context (cluster_view_groups.cc)
  const GroupCheck* CheckInSetLocked(GroupPass& pass, const std::string& name) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  const GroupCheck* CheckNewSetLocked(GroupPass& pass, const std::string& name) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Why the set `nodes` cannot take a new group; null when it can.
  const GroupCheck* SetProblemLocked(GroupPass& pass, const std::string& server_id,
                                     const std::vector<std::string>& nodes) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);

  struct NodeEntry {
    // Snapshot() cache: valid until `cached_until` (the first counted reservation expiry) or
    // until a change resets it; only set while `info` is. First, so that a filter's lookup of
    // hundreds of cached nodes reads one line of each slot, beside the key.
    mutable std::shared_ptr<const NodeState> cached;
    mutable absl::Time cached_until = absl::InfiniteFuture();
    std::optional<NodeInfo> info;                      // null until the Node is seen
    std::map<std::string, std::vector<Holding>> pods;  // pod key -> holdings
    // UltraServer groups: live group pods here, and whether a group's reservation names this
    // node (maybe expired): when both are clear no group holds it, without another lookup.
    int group_pods = 0;
    bool group_reserved = false;
  };

  std::optional<NodeState> StateLocked(const std::string& node, const std::string& exclude_pod,
                                       const std::set<std::string>* exclude_uids, absl::Time now,
                                       bool with_holdings = false) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void RemovePodLocked(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplyPodLocked(PodHoldings pod) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UpsertNodeLocked(NodeInfo info) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DeleteNodeLocked(const std::string& name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void InvalidateLocked(const std::string& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EraseReservationLocked(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock& clock_;
  mutable absl::Mutex mu_;
  // Guards NodeEntry::cached / cached_until, which readers (holding mu_ shared) fill in.
  mutable absl::Mutex cache_mu_ ABSL_ACQUIRED_AFTER(mu_);
  // Open addressing, names inline (node_key.h): filter looks up hundreds of names per call,
  // and a node-based table cost several cache misses per name.
  absl::flat_hash_map<NodeKey, NodeEntry, NodeKeyHash, NodeKeyEq> nodes_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, std::string> pod_node_ ABSL_GUARDED_BY(mu_);      // key -> node
  std::unordered_map<std::string, Reservation> reservations_ ABSL_GUARDED_BY(mu_);  // by uid
  std::unordered_map<std::string, PendingPod> pending_ ABSL_GUARDED_BY(mu_);        // by key
  // UltraServer sets: server id -> nodes by node id, for sets of 2 and of 4.
  absl::flat_hash_map<std::string, std::vector<std::string>> sets2_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::vector<std::string>> sets4_ ABSL_GUARDED_BY(mu_);
  // Live bound pods of groups: pod key -> (group, node); group -> its pods; node -> groups.
  std::unordered_map<std::string, std::pair<std::string, std::string>> pod_group_
      ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, std::map<std::string, std::string>> group_pods_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::map<std::string, int>> node_groups_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<std::string, GroupReservation> group_res_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::string> node_reserved_ ABSL_GUARDED_BY(mu_);  // -> group
};

}  // namespace neuron::extender
