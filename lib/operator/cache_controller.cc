// File: lib/operator/cache_controller.cc
#include "lib/operator/cache_controller.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/json_access.h"
#include "lib/k8s/conditions.h"
#include "lib/k8s/errors.h"
#include "lib/k8s/k8s_time.h"
#include "lib/operator/cache_status.h"
#include "spdlog/spdlog.h"

namespace neuron::op {
namespace {

using nlohmann::json;

struct KeyParts {
  std::string kind, ns, name;
};

KeyParts SplitKey(const std::string& key) {
  std::vector<std::string> p = absl::StrSplit(key, '/');
  if (p.size() == 2) return {p[0], "", p[1]};
  if (p.size() == 3) return {p[0], p[1], p[2]};
  return {};
}

std::string KeyOf(const json& obj, const char* kind) {
  return CacheKey(kind, StringAt(obj, {"metadata", "namespace"}),
                  StringAt(obj, {"metadata", "name"}));
}

std::vector<std::string> Finalizers(const json& obj) {
  std::vector<std::string> out;
  for (const json& f : MemberOrNull(MemberOrNull(obj, "metadata"), "finalizers")) {
    if (f.is_string()) out.push_back(f.get<std::string>());
  }
  return out;
}

}  // namespace

CacheController::CacheController(k8s::RestClient& client, DigestResolver* resolver,
                                 CacheControllerOptions opts, CacheObserver observer)
    : client_(client),
      resolver_(resolver),
      opts_(std::move(opts)),
      observer_(std::move(observer)),
      clock_(opts_.clock != nullptr ? *opts_.clock : Clock::Real()),
      queue_(k8s::WorkQueueOptions{opts_.base_backoff, opts_.max_backoff, absl::Milliseconds(20),
                                   opts_.clock}) {}

CacheController::~CacheController() { Stop(); }

void CacheController::Start() {
  if (started_) return;
  started_ = true;
  auto watch_caches = [this](k8s::Informer& inf, const char* kind) {
    auto enqueue = [this, kind](const k8s::ObjectPtr& o) { queue_.Add(KeyOf(*o, kind)); };
    inf.AddEventHandler({enqueue,
                         [enqueue](const k8s::ObjectPtr&, const k8s::ObjectPtr& o) { enqueue(o); },
                         enqueue});
  };
  caches_ = std::make_unique<k8s::Informer>(client_, cache::kNeuronCaches, "");
  watch_caches(*caches_, cache::kNeuronCacheKind);
  cluster_caches_ = std::make_unique<k8s::Informer>(client_, cache::kClusterNeuronCaches, "");
  watch_caches(*cluster_caches_, cache::kClusterNeuronCacheKind);
  nodes_ = std::make_unique<k8s::Informer>(client_, cache::kNeuronCacheNodes, "");
  nodes_->AddEventHandler(
      {[this](const k8s::ObjectPtr& o) { OnNodeReport(o, false); },
       [this](const k8s::ObjectPtr&, const k8s::ObjectPtr& o) { OnNodeReport(o, false); },
       [this](const k8s::ObjectPtr& o) { OnNodeReport(o, true); }});
  nodes_->Start();
  caches_->Start();
  cluster_caches_->Start();
  {
    absl::MutexLock lock(&pending_mu_);
    stopping_ = false;
  }
  debouncer_ = std::thread([this] { Debounce(); });
  for (int i = 0; i < opts_.workers; ++i) workers_.emplace_back([this] { Work(); });
}

void CacheController::Stop() {
  if (!started_) return;
  started_ = false;
  {
    absl::MutexLock lock(&pending_mu_);
    stopping_ = true;
  }
  if (debouncer_.joinable()) debouncer_.join();
  queue_.ShutDown();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  for (auto* inf : {caches_.get(), cluster_caches_.get(), nodes_.get()}) inf->Stop();
}

bool CacheController::synced() const {
  return caches_ && cluster_caches_ && nodes_ && caches_->HasSynced() &&
         cluster_caches_->HasSynced() && nodes_->HasSynced();
}

void CacheController::WaitForCaches() const {
  // A pass before the node reports are listed would count no pods and could release the
  // finalizer of a cache in use.
  while (!synced() && !queue_.shutting_down()) {
    for (const k8s::Informer* inf : {nodes_.get(), caches_.get(), cluster_caches_.get()}) {
      if (!inf->HasSynced()) {
        inf->WaitForSync(absl::Seconds(1));
        break;
      }
    }
  }
}

void CacheController::OnNodeReport(const k8s::ObjectPtr& obj, bool deleted) {
  const std::string node = StringAt(*obj, {"metadata", "name"});
  std::vector<cache::NodeCacheRecord> records;
  if (!deleted) {
    absl::StatusOr<cache::NodeCacheReport> report = cache::ParseCacheNodeObject(*obj);
    if (!report.ok()) {
      spdlog::warn("NeuronCacheNode ignored node={} error=\"{}\"", node,
                   std::string(report.status().message()));
      return;
    }
    records = std::move(report->caches);
  }
  // Reports of one cache from many nodes within the window make one pass.
  const std::vector<std::string> changed = index_.Update(node, records);
  if (changed.empty()) return;
  absl::MutexLock lock(&pending_mu_);
  pending_.insert(changed.begin(), changed.end());
}

void CacheController::Debounce() {
  auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(pending_mu_) { return stopping_; };
  absl::MutexLock lock(&pending_mu_);
  while (!pending_mu_.AwaitWithTimeout(absl::Condition(&stopping), opts_.debounce)) {
    for (const std::string& key : pending_) queue_.Add(key);
    pending_.clear();
  }
}

const k8s::Informer* CacheController::InformerFor(const std::string& kind) const {
  if (kind == cache::kNeuronCacheKind) return caches_.get();
  if (kind == cache::kClusterNeuronCacheKind) return cluster_caches_.get();
  return nullptr;
}

void CacheController::Work() {
  while (std::optional<std::string> key = queue_.Get()) {
    WaitForCaches();
    absl::Status st = Sync(*key);
    ++passes_;
    if (st.ok()) {
      queue_.Forget(*key);
      if (std::optional<absl::Duration> in = NextResolveIn(*key)) queue_.AddAfter(*key, *in);
    } else if (k8s::IsTerminal(st)) {
      spdlog::warn("cache pass refused key={} error=\"{}\"", *key, st.ToString());
      queue_.Forget(*key);
    } else {
      spdlog::warn("cache pass failed key={} retry_in={} error=\"{}\"", *key,
                   absl::FormatDuration(queue_.NextBackoff(*key)), st.ToString());
      queue_.AddRateLimited(*key);
    }
    queue_.Done(*key);
  }
}

// Long on purpose: one pass in order (read, finalizer, resolve, sum, write), each a few lines.
absl::Status CacheController::Sync(const std::string& key) {
  const KeyParts k = SplitKey(key);
  const k8s::Informer* inf = InformerFor(k.kind);
  if (inf == nullptr) return absl::InvalidArgumentError(absl::StrCat("bad cache key ", key));
  const k8s::ObjectPtr obj = inf->store().Get(k.ns.empty() ? k.name : k.ns + "/" + k.name);
  if (obj == nullptr) {
    absl::MutexLock lock(&mu_);
    resolve_.erase(key);
    if (observer_.on_ready) observer_.on_ready(key, std::nullopt);
    return absl::OkStatus();
  }
  absl::StatusOr<cache::CacheSpec> spec = cache::ParseCacheObject(*obj, k.kind);
  if (!spec.ok()) {
    // The CRD's schema makes this rare; such an object is not ours to hold.
    spdlog::warn("cache ignored key={} error=\"{}\"", key, std::string(spec.status().message()));
    return absl::OkStatus();
  }
  const json& current = MemberOrNull(*obj, "status");
  if (spec->deleting) {
    return SyncDeleting(*spec, *obj, AggregateUsage(index_.Records(key), WantedDigest(*spec)));
  }
  const std::vector<std::string> fins = Finalizers(*obj);
  std::string rv = StringAt(*obj, {"metadata", "resourceVersion"});
  if (std::find(fins.begin(), fins.end(), cache::kInUseFinalizer) == fins.end()) {
    absl::StatusOr<json> held = SetFinalizer(*spec, *obj, true);
    if (!held.ok()) return held.status();
    rv = StringAt(*held, {"metadata", "resourceVersion"});  // the status write follows it
  }
  const std::optional<ResolveOutcome> resolved = MaybeResolve(key, *spec, current);
  const CacheUsage usage = AggregateUsage(index_.Records(key), NextResolvedDigest(*spec, resolved));
  const json desired = DesiredCacheStatus(*spec, current, resolved, usage, clock_.Now());
  if (observer_.on_ready) {
    observer_.on_ready(key, k8s::IsConditionTrue(MemberOrNull(desired, "conditions"), "Ready"));
  }
  if (desired != current) {
    if (absl::Status st = WriteStatus(*spec, rv, desired); !st.ok()) return st;
  }
  if (resolved.has_value()) {
    absl::MutexLock lock(&mu_);
    if (auto it = resolve_.find(key); it != resolve_.end()) it->second.unwritten.reset();
  }
  return absl::OkStatus();
}

absl::Status CacheController::WriteStatus(const cache::CacheSpec& spec, const std::string& rv,
                                          const json& status) {
  k8s::PatchOptions po;
  po.subresource = "status";
  const json patch = {{"metadata", {{"resourceVersion", rv}}}, {"status", status}};
  return client_
      .Patch(
          spec.kind == cache::kNeuronCacheKind ? cache::kNeuronCaches : cache::kClusterNeuronCaches,
          spec.namespace_, spec.name, k8s::PatchType::kMerge, patch, po)
      .status();
}

absl::Status CacheController::SyncDeleting(const cache::CacheSpec& spec, const json& obj,
                                           const CacheUsage& usage) {
  const std::vector<std::string> fins = Finalizers(obj);
  if (std::find(fins.begin(), fins.end(), cache::kInUseFinalizer) == fins.end()) {
    return absl::OkStatus();
  }
  if (usage.counts.pods_using == 0) return SetFinalizer(spec, obj, false).status();
  // Pods still mount it: say whom we wait for; their nodes' reports start the next pass.
  const json& current = MemberOrNull(obj, "status");
  const json desired = DesiredCacheStatus(spec, current, std::nullopt, usage, clock_.Now());
  if (desired == current) return absl::OkStatus();
  return WriteStatus(spec, StringAt(obj, {"metadata", "resourceVersion"}), desired);
}

absl::StatusOr<json> CacheController::SetFinalizer(const cache::CacheSpec& spec, const json& obj,
                                                   bool held) {
  std::vector<std::string> fins = Finalizers(obj);
  std::erase(fins, std::string(cache::kInUseFinalizer));
  if (held) fins.push_back(cache::kInUseFinalizer);
  // The list replaces the stored one: the resourceVersion makes a concurrent change a 409
  // (retried from the informer's newer copy) instead of a lost finalizer of someone else.
  const json patch = {{"metadata",
                       {{"finalizers", fins},
                        {"resourceVersion", StringAt(obj, {"metadata", "resourceVersion"})}}}};
  spdlog::info("{} finalizer {} on {}", held ? "adding" : "removing", cache::kInUseFinalizer,
               spec.Describe());
  return client_.Patch(
      spec.kind == cache::kNeuronCacheKind ? cache::kNeuronCaches : cache::kClusterNeuronCaches,
      spec.namespace_, spec.name, k8s::PatchType::kMerge, patch);
}

std::optional<ResolveOutcome> CacheController::MaybeResolve(const std::string& key,
                                                            const cache::CacheSpec& spec,
                                                            const json& status) {
  if (resolver_ == nullptr || ImageByDigest(spec)) return std::nullopt;
  const absl::Time now = clock_.Now();
  {
    absl::MutexLock lock(&mu_);
    auto it = resolve_.find(key);
    const bool same = it != resolve_.end() && it->second.uid == spec.uid &&
                      it->second.generation == spec.generation && it->second.image == spec.image;
    if (same && now < it->second.next) return it->second.unwritten;
    if (!same) {
      ResolveState st;
      st.uid = spec.uid;
      st.generation = spec.generation;
      st.image = spec.image;
      // After a restart: a fresh answer for this generation in the status is not asked again.
      absl::StatusOr<absl::Time> at = k8s::ParseTime(StringMember(status, "resolvedAt"));
      if (at.ok() && IntOf(Member(status, "observedGeneration")) == spec.generation &&
          !spec.resolved_digest.empty() && now < *at + opts_.resolve_interval) {
        st.next = *at + opts_.resolve_interval;
        resolve_[key] = st;
        return std::nullopt;
      }
      resolve_[key] = st;
    }
  }
  ResolveOutcome out{resolver_->Resolve(spec), now};
  absl::MutexLock lock(&mu_);
  ResolveState& st = resolve_[key];
  st.unwritten = out;
  if (out.digest.ok()) {
    st.failures = 0;
    st.next = now + opts_.resolve_interval;
  } else {
    spdlog::warn("resolving {} failed: {}", spec.Describe(), out.digest.status().ToString());
    if (observer_.on_resolve_failure) observer_.on_resolve_failure(key);
    st.next = now + std::min(opts_.resolve_retry * (int64_t{1} << std::min(st.failures, 10)),
                             opts_.resolve_interval);
    ++st.failures;
  }
  return out;
}

std::optional<absl::Duration> CacheController::NextResolveIn(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = resolve_.find(key);
  if (it == resolve_.end() || it->second.next == absl::InfinitePast()) return std::nullopt;
  return std::max(it->second.next - clock_.Now(), absl::ZeroDuration());
}

}  // namespace neuron::op
