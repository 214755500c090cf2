// File: lib/dra/neuron_preparer.cc
#include "lib/dra/neuron_preparer.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "lib/base/status_macros.h"
#include "lib/cache/cache_api.h"
#include "lib/dra/cdi_spec.h"
#include "lib/dra/claim_cache.h"
#include "lib/dra/names.h"
#include "lib/dra/neuron_config.h"
#include "spdlog/spdlog.h"

namespace neuron::dra {

// The cache API's names, repeated in the pure config parser (neuron_config.h).
static_assert(std::string_view(kNeuronCacheKind) == cache::kNeuronCacheKind);
static_assert(std::string_view(kClusterNeuronCacheKind) == cache::kClusterNeuronCacheKind);
static_assert(std::string_view(kDefaultCacheMountPath) == cache::kDefaultCompileCachePath);

struct ClaimPlan {
  ClaimAllocation alloc;
  ClaimDevices edits;
  std::optional<ClaimCache> cache;
};

namespace {

namespace fs = std::filesystem;

std::string ClaimName(const ClaimRef& c) { return absl::StrCat(c.ns, "/", c.name); }

absl::Status WithContext(const absl::Status& s, absl::string_view what) {
  return absl::Status(s.code(), absl::StrCat(what, ": ", s.message()));
}

// A checkpoint we cannot trust is kept for the admin under a new name; the claims it listed are
// re-prepared from the API as the kubelet repeats its calls, and unprepare works by claim UID.
absl::StatusOr<Checkpoint> LoadOrSetAside(const std::string& path) {
  absl::StatusOr<Checkpoint> loaded = LoadCheckpoint(path);
  if (loaded.ok()) return loaded;
  const absl::StatusCode code = loaded.status().code();
  if (code != absl::StatusCode::kDataLoss && code != absl::StatusCode::kFailedPrecondition) {
    return loaded.status();
  }
  const std::string aside = absl::StrCat(path, ".unreadable-", absl::ToUnixSeconds(absl::Now()));
  std::error_code ec;
  fs::rename(path, aside, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("checkpoint ", path, " is unreadable (",
                                            loaded.status().message(),
                                            ") and could not be moved aside: ", ec.message()));
  }
  spdlog::error("dra: checkpoint {} is unreadable ({}); kept as {}, starting empty", path,
                std::string(loaded.status().message()), aside);
  return Checkpoint{};
}

// The devices' indices in ascending order: the order the runtime numbers them in a container.
// The node device stands for all `node_devices`.
std::vector<int> DeviceIndices(const ClaimAllocation& alloc, int node_devices) {
  std::set<int> set;
  for (const AllocatedDevice& d : alloc.devices) {
    if (!d.ref.node) {
      set.insert(d.ref.device);
      continue;
    }
    for (int i = 0; i < node_devices; ++i) {
      set.insert(i);
    }
  }
  return {set.begin(), set.end()};
}

// NEURON_RT_VISIBLE_CORES in container numbering (the device plugin's default): the container
// sees only its /dev/neuronN nodes, numbered 0..k-1 by ascending N, each with
// `cores_per_device` logical cores.
std::vector<int> VisibleCores(const ClaimAllocation& alloc, int node_devices,
                              int cores_per_device) {
  const std::vector<int> indices = DeviceIndices(alloc, node_devices);
  std::set<int> cores;
  if (std::any_of(alloc.devices.begin(), alloc.devices.end(),
                  [](const AllocatedDevice& d) { return d.ref.node; })) {
    for (size_t c = 0; c < indices.size() * cores_per_device; ++c) {
      cores.insert(static_cast<int>(c));
    }
  }
  for (const AllocatedDevice& d : alloc.devices) {
    if (d.ref.node) {
      continue;
    }
    const int rank = static_cast<int>(
        std::lower_bound(indices.begin(), indices.end(), d.ref.device) - indices.begin());
    if (d.ref.core) {
      cores.insert(rank * cores_per_device + *d.ref.core);
    } else {
      for (int c = 0; c < cores_per_device; ++c) cores.insert(rank * cores_per_device + c);
    }
  }
  return {cores.begin(), cores.end()};
}

bool Overlaps(const DeviceRef& a, const DeviceRef& b) {
  if (a.node || b.node) {
    return true;  // the node device holds every device and core of the node
  }
  return a.device == b.device && (!a.core || !b.core || *a.core == *b.core);
}

// The LNC the claim's containers run with, checked against the node.
absl::StatusOr<int> EffectiveLnc(const ClaimAllocation& alloc, const NodeFacts& node) {
  const int lnc = alloc.logical_neuron_core.value_or(node.node_lnc);
  if (lnc == 2 && !node.lnc2_supported) {
    return absl::InvalidArgumentError(
        "NeuronConfig logicalNeuronCore 2 needs Trainium2 or later; this node's chips support "
        "only 1");
  }
  const bool has_cores =
      std::any_of(alloc.devices.begin(), alloc.devices.end(),
                  [](const AllocatedDevice& d) { return d.ref.core.has_value(); });
  if (has_cores && lnc != node.node_lnc) {
    return absl::InvalidArgumentError(absl::StrCat(
        "NeuronConfig logicalNeuronCore ", lnc, " differs from the node's ", node.node_lnc,
        ", with which its NeuronCore partitions are published; request whole devices to run "
        "with another LNC"));
  }
  return lnc;
}

absl::Status CheckOnNode(const ClaimAllocation& alloc, const NodeFacts& node, int lnc) {
  const int node_cores = node.node_lnc > 0 ? node.physical_cores_per_device / node.node_lnc : 0;
  for (const AllocatedDevice& d : alloc.devices) {
    if (d.ref.node) {
      continue;  // every device there is
    }
    if (d.ref.device >= node.devices || (d.ref.core && *d.ref.core >= node_cores)) {
      return absl::FailedPreconditionError(absl::StrCat("device ", d.name, " is not on this node (",
                                                        node.devices, " devices, ", node_cores,
                                                        " cores each)"));
    }
  }
  if (node.physical_cores_per_device < lnc) {
    return absl::FailedPreconditionError("the node's core count is not known yet");
  }
  return absl::OkStatus();
}

// The runtime's UltraServer variables when the claim carries an UltraServerConfig.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ClaimUltraServerEnv(
    const ClaimAllocation& alloc, const NodeFacts& node, const NeuronPreparerOptions& o) {
  if (!alloc.ultraserver_set) {
    return std::vector<std::pair<std::string, std::string>>{};
  }
  NEURON_ASSIGN_OR_RETURN(ultraserver::SetMember m,
                          PlaceInSet(*alloc.ultraserver_set, o.node_name, node.ultraserver));
  return UltraServerEnv(m, o.node_name, o.rank0_host);
}

// What the claim's containers get: its device nodes, their cores and the LNC.
ClaimDevices CdiEdits(const std::string& uid, const ClaimAllocation& alloc, const NodeFacts& node,
                      int lnc, const std::string& device_host_path) {
  ClaimDevices cdi{uid,
                   DeviceIndices(alloc, node.devices),
                   VisibleCores(alloc, node.devices, node.physical_cores_per_device / lnc),
                   std::nullopt,
                   device_host_path,
                   {},
                   {}};
  // Set on LNC-capable chips (the runtime's default there may differ from the node's), and
  // whenever the claim asks.
  if (node.lnc2_supported || alloc.logical_neuron_core) cdi.logical_nc_config = lnc;
  return cdi;
}

std::string Describe(const ClaimCache& c) {
  return DescribeCache(c.request.kind, c.request.cache_namespace, c.request.cache_name);
}
std::string Describe(const PreparedCache& c) {
  return DescribeCache(c.kind, c.namespace_name, c.name);
}

std::optional<PreparedCache> Record(const std::optional<ClaimCache>& c) {
  if (!c) return std::nullopt;
  return PreparedCache{c->request.kind, c->request.cache_namespace, c->request.cache_name,
                       c->mount_path};
}

std::string NodeDeviceNote() {
  return absl::StrCat(
      " (", kNodeDeviceName,
      ", the UltraServer node device, stands for every device of the node; unless its slice "
      "carries counters for that (partitionable devices), the scheduler may allocate both: this "
      "claim waits until the other is unprepared)");
}

}  // namespace

absl::StatusOr<std::unique_ptr<NeuronPreparer>> NeuronPreparer::Create(
    NeuronPreparerOptions options, ClaimSource& source) {
  if (options.node_name.empty() || options.cdi_dir.empty() || options.checkpoint_path.empty() ||
      !options.node_facts) {
    return absl::InvalidArgumentError(
        "NeuronPreparer needs a node name, a CDI directory, a checkpoint path and node facts");
  }
  std::error_code ec;
  fs::create_directories(fs::path(options.checkpoint_path).parent_path(), ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("cannot create the directory of ",
                                            options.checkpoint_path, ": ", ec.message()));
  }
  NEURON_ASSIGN_OR_RETURN(Checkpoint checkpoint, LoadOrSetAside(options.checkpoint_path));
  spdlog::info("dra: checkpoint {} lists {} claim(s)", options.checkpoint_path,
               checkpoint.claims.size());
  return std::unique_ptr<NeuronPreparer>(
      new NeuronPreparer(std::move(options), source, std::move(checkpoint)));
}

NeuronPreparer::NeuronPreparer(NeuronPreparerOptions options, ClaimSource& source,
                               Checkpoint checkpoint)
    : options_(std::move(options)), source_(source), checkpoint_(std::move(checkpoint)) {}

PrepareResults NeuronPreparer::Prepare(const std::vector<ClaimRef>& claims) {
  PrepareResults out;
  absl::MutexLock lock(&mu_);
  for (const ClaimRef& claim : claims) {
    absl::StatusOr<std::vector<PreparedDevice>> r = PrepareOne(claim);
    if (r.ok()) {
      spdlog::info("dra: prepared claim={} uid={} devices={}", ClaimName(claim), claim.uid,
                   r->size());
    } else {
      spdlog::warn("dra: prepare failed claim={} uid={}: {}", ClaimName(claim), claim.uid,
                   r.status().ToString());
    }
    out.emplace(claim.uid, std::move(r));
  }
  return out;
}

UnprepareResults NeuronPreparer::Unprepare(const std::vector<ClaimRef>& claims) {
  UnprepareResults out;
  absl::MutexLock lock(&mu_);
  for (const ClaimRef& claim : claims) {
    absl::Status s = UnprepareOne(claim);
    if (s.ok()) {
      spdlog::info("dra: unprepared claim={} uid={}", ClaimName(claim), claim.uid);
    } else {
      spdlog::warn("dra: unprepare failed claim={} uid={}: {}", ClaimName(claim), claim.uid,
                   s.ToString());
    }
    out.emplace(claim.uid, std::move(s));
  }
  return out;
}

std::vector<std::string> NeuronPreparer::PreparedClaims() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> uids;
  for (const auto& [uid, claim] : checkpoint_.claims) {
    if (claim.state == ClaimState::kPrepared) uids.push_back(uid);
  }
  return uids;
}

absl::StatusOr<std::vector<PreparedDevice>> NeuronPreparer::PrepareOne(const ClaimRef& claim) {
  if (auto it = checkpoint_.claims.find(claim.uid);
      it != checkpoint_.claims.end() && it->second.state == ClaimState::kPrepared) {
    return it->second.devices;  // a repeated call: the same answer
  }
  absl::StatusOr<nlohmann::json> object = source_.Get(claim);
  if (!object.ok()) {
    return WithContext(object.status(), absl::StrCat("read ResourceClaim ", ClaimName(claim)));
  }
  NEURON_ASSIGN_OR_RETURN(ClaimPlan plan, Plan(claim, *object));
  return Commit(claim, plan);
}

absl::StatusOr<ClaimPlan> NeuronPreparer::Plan(const ClaimRef& claim,
                                               const nlohmann::json& object) const {
  const std::string what = absl::StrCat("ResourceClaim ", ClaimName(claim));
  NEURON_ASSIGN_OR_RETURN(
      ClaimAllocation alloc,
      ReadClaimAllocation(object, claim.uid, options_.driver_name, options_.node_name));
  absl::StatusOr<NodeFacts> node = options_.node_facts();
  if (!node.ok()) return WithContext(node.status(), "node inventory");
  absl::StatusOr<int> lnc = EffectiveLnc(alloc, *node);
  if (!lnc.ok()) return WithContext(lnc.status(), what);
  if (absl::Status s = CheckOnNode(alloc, *node, *lnc); !s.ok()) return WithContext(s, what);
  NEURON_RETURN_IF_ERROR(CheckNoOverlap(claim.uid, alloc));
  auto us_env = ClaimUltraServerEnv(alloc, *node, options_);
  if (!us_env.ok()) return WithContext(us_env.status(), what);
  absl::StatusOr<std::optional<ClaimCache>> cache =
      ReadClaimCache(object, options_.driver_name, options_.node_name);
  if (!cache.ok()) return WithContext(cache.status(), what);
  if (*cache && options_.cache_mounts == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        what, ": its NeuronConfig names compileCache ", Describe(**cache),
        ", but compile caches are not enabled in this node's Neuron DRA driver; enable them or "
        "remove compileCache from the claim's config"));
  }
  ClaimPlan plan{alloc, CdiEdits(claim.uid, alloc, *node, *lnc, options_.device_host_path),
                 *std::move(cache)};
  plan.edits.env = *std::move(us_env);
  return plan;
}

absl::StatusOr<std::vector<PreparedDevice>> NeuronPreparer::Commit(const ClaimRef& claim,
                                                                   ClaimPlan& plan) {
  PreparedClaim& record = checkpoint_.claims[claim.uid];
  record = PreparedClaim{claim.ns, claim.name, ClaimState::kPreparing, {}, Record(plan.cache)};
  for (const AllocatedDevice& d : plan.alloc.devices) {
    record.devices.push_back({{d.request}, options_.node_name, d.name, {}});
  }
  // "preparing" (with the cache) is on disk before the cache is mounted and the CDI file exists.
  absl::Status step = Save();
  if (step.ok() && plan.cache) {
    absl::StatusOr<std::string> dir = options_.cache_mounts->Prepare(plan.cache->request);
    if (dir.ok()) {
      plan.edits.mounts.push_back({*dir, plan.cache->mount_path, {"rbind", "rw"}, ""});
    } else {
      step = WithContext(dir.status(), absl::StrCat("compile cache ", Describe(*plan.cache)));
    }
  }
  absl::StatusOr<std::string> cdi_id =
      step.ok() ? WriteCdiSpec(options_.cdi_dir, plan.edits) : absl::StatusOr<std::string>(step);
  if (cdi_id.ok()) {
    for (PreparedDevice& d : record.devices) d.cdi_device_ids = {*cdi_id};
    record.state = ClaimState::kPrepared;
    step = Save();
  } else {
    step = cdi_id.status();
  }
  if (!step.ok()) {
    RollBack(claim.uid, plan.cache.has_value());
    return WithContext(step, absl::StrCat("prepare ResourceClaim ", ClaimName(claim)));
  }
  return record.devices;
}

// Undoes Commit's steps for the claim. A cache that cannot be released keeps its record (without
// devices, so they are free for other claims): Unprepare or a later prepare retries.
void NeuronPreparer::RollBack(const std::string& uid, bool release_cache) {
  (void)RemoveCdiSpec(options_.cdi_dir, uid);
  absl::Status released = absl::OkStatus();
  if (release_cache) released = options_.cache_mounts->Release(uid);
  if (released.ok()) {
    checkpoint_.claims.erase(uid);
  } else {
    spdlog::warn("dra: compile cache of claim uid={} not released after a failed prepare: {}", uid,
                 released.ToString());
    PreparedClaim& record = checkpoint_.claims[uid];
    record.state = ClaimState::kPreparing;
    record.devices.clear();
  }
  (void)Save();
}

absl::Status NeuronPreparer::UnprepareOne(const ClaimRef& claim) {
  NEURON_RETURN_IF_ERROR(RemoveCdiSpec(options_.cdi_dir, claim.uid));
  auto it = checkpoint_.claims.find(claim.uid);
  if (it == checkpoint_.claims.end()) return absl::OkStatus();
  if (const std::optional<PreparedCache>& cache = it->second.cache; cache) {
    if (options_.cache_mounts == nullptr) {
      // Refusing would keep the pod from ever finishing: the view is left for the admin.
      spdlog::error(
          "dra: claim uid={} had compile cache {} but compile caches are not enabled now; its "
          "view on this node was not released",
          claim.uid, Describe(*cache));
    } else if (absl::Status s = options_.cache_mounts->Release(claim.uid); !s.ok()) {
      return WithContext(s, absl::StrCat("release compile cache ", Describe(*cache)));
    }
  }
  checkpoint_.claims.erase(it);
  return Save();
}

absl::Status NeuronPreparer::CheckNoOverlap(const std::string& uid,
                                            const ClaimAllocation& alloc) const {
  for (const auto& [other_uid, other] : checkpoint_.claims) {
    if (other_uid == uid) continue;
    for (const PreparedDevice& held : other.devices) {
      absl::StatusOr<DeviceRef> held_ref = ParseDeviceName(held.device);
      if (!held_ref.ok()) continue;
      for (const AllocatedDevice& d : alloc.devices) {
        if (d.admin_access || !Overlaps(d.ref, *held_ref)) continue;
        // Usually transient: the kubelet has not yet unprepared the claim that held the device
        // before the scheduler gave it to this one. Its retry succeeds once it has.
        return absl::UnavailableError(absl::StrCat(
            "device ", d.name, " is still prepared for ResourceClaim ", other.namespace_name, "/",
            other.name, " (", held.device, "); not handing it out twice",
            d.ref.node || held_ref->node ? NodeDeviceNote() : ""));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status NeuronPreparer::Save() {
  return SaveCheckpoint(options_.checkpoint_path, checkpoint_);
}

}  // namespace neuron::dra
