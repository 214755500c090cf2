// File: lib/cache/node_controller.cc
#include "lib/cache/node_controller.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/cache/pull_secrets.h"
#include "lib/k8s/resource.h"
#include "spdlog/spdlog.h"

namespace neuron::cache {
namespace {

inline const k8s::ResourceRef kSecrets{"", "v1", "secrets", true};
CacheKey KeyOf(const CacheSpec& s) {
  CacheKey key;
  key.kind = s.kind == kClusterNeuronCacheKind ? CacheKind::kCluster : CacheKind::kNamespaced;
  key.namespace_ = s.kind == kClusterNeuronCacheKind ? "_" : s.namespace_;
  key.name = s.name;
  return key;
}

CacheEntry Entry(const CacheSpec& spec, const std::string& digest, CacheState state,
                 std::string reason, std::string message) {
  CacheEntry e;
  e.image = spec.image;
  e.digest = digest;
  e.state = state;
  e.reason = std::move(reason);
  e.message = std::move(message);
  e.generation = spec.generation;
  return e;
}

}  // namespace

NodeController::NodeController(std::shared_ptr<k8s::RestClient> client, CacheStore& store,
                               CacheMetrics* metrics, NodeControllerOptions opts)
    : client_(std::move(client)),
      store_(store),
      metrics_(metrics),
      opts_(std::move(opts)),
      registry_(opts_.registry),
      events_(*client_, "neuron-node-agent", opts_.node_name) {}

NodeController::~NodeController() { Stop(); }

absl::Status NodeController::Start() {
  if (opts_.node_name.empty()) {
    return absl::InvalidArgumentError("compile caches need the node name (--node-name, NODE_NAME)");
  }
  caches_ = std::make_unique<k8s::Informer>(*client_, kNeuronCaches, "");
  cluster_caches_ = std::make_unique<k8s::Informer>(*client_, kClusterNeuronCaches, "");
  for (k8s::Informer* inf : {caches_.get(), cluster_caches_.get()}) {
    inf->AddEventHandler({[this](const k8s::ObjectPtr&) { Trigger(); },
                          [this](const k8s::ObjectPtr&, const k8s::ObjectPtr&) { Trigger(); },
                          [this](const k8s::ObjectPtr&) { Trigger(); }});
    inf->Start();
  }
  worker_ = std::thread([this] { Loop(); });
  spdlog::info("compile caches: watching NeuronCaches for node={} store={}", opts_.node_name,
               store_.root());
  return absl::OkStatus();
}

void NodeController::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  {
    absl::MutexLock l(&mu_);
    triggered_ = true;
  }
  if (worker_.joinable()) worker_.join();
  if (caches_) caches_->Stop();
  if (cluster_caches_) cluster_caches_->Stop();
}

void NodeController::Trigger() {
  absl::MutexLock l(&mu_);
  triggered_ = true;
}

int NodeController::passes() const {
  absl::MutexLock l(&mu_);
  return passes_;
}

void NodeController::Loop() {
  while (!Cancelled()) {
    {
      absl::MutexLock l(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&triggered_), opts_.resync);
      triggered_ = false;
    }
    if (Cancelled()) break;
    if (!caches_->HasSynced() || !cluster_caches_->HasSynced()) {
      Trigger();
      absl::SleepFor(absl::Milliseconds(100));
      continue;
    }
    if (absl::Status s = ReconcileOnce(); !s.ok()) {
      spdlog::warn("compile caches: pass failed error=\"{}\"", std::string(s.message()));
    }
    absl::MutexLock l(&mu_);
    ++passes_;
  }
}

std::vector<CacheSpec> NodeController::ListSpecs() const {
  std::vector<CacheSpec> out;
  const std::pair<const k8s::Informer*, const char*> sources[] = {
      {caches_.get(), kNeuronCacheKind}, {cluster_caches_.get(), kClusterNeuronCacheKind}};
  for (const auto& [inf, kind] : sources) {
    if (inf == nullptr) continue;
    for (const k8s::ObjectPtr& obj : inf->store().List()) {
      absl::StatusOr<CacheSpec> spec = ParseCacheObject(*obj, kind);
      if (!spec.ok()) {
        spdlog::warn("compile caches: skipping {}", std::string(spec.status().message()));
        continue;
      }
      out.push_back(*std::move(spec));
    }
  }
  return out;
}

nlohmann::json NodeController::NodeLabels() {
  absl::StatusOr<nlohmann::json> node = client_->Get(k8s::resources::kNodes, "", opts_.node_name);
  if (node.ok()) {
    node_uid_ = StringAt(*node, {"metadata", "uid"});
    node_labels_ = MemberOrNull(*node, {"metadata", "labels"});
  } else {
    spdlog::warn("compile caches: cannot read node {} (using its last labels) error=\"{}\"",
                 opts_.node_name, std::string(node.status().message()));
  }
  return node_labels_;
}

absl::Status NodeController::ReconcileOnce() {
  const nlohmann::json labels = NodeLabels();
  std::set<std::string> keep;
  std::set<std::string> wanted;
  for (const CacheSpec& spec : ListSpecs()) {
    if (spec.deleting || !SelectsNode(spec, labels)) continue;
    const CacheKey key = KeyOf(spec);
    wanted.insert(key.ToString());
    const std::string digest = WantedDigest(spec);
    if (digest.empty()) {
      SetEntry(key, Entry(spec, "", CacheState::kPending, "WaitingForDigest",
                          "the operator has not resolved the tag to a digest yet"));
    } else if (!spec.verify_digest.empty() && digest != spec.verify_digest) {
      SetEntry(key,
               Entry(spec, digest, CacheState::kFailed, "DigestMismatch",
                     absl::StrCat("image resolves to ", digest, ", spec.verify.digest pins ",
                                  spec.verify_digest)),
               &spec);
    } else {
      keep.insert(digest);
      Ensure(spec, digest);
    }
    if (Cancelled()) return absl::CancelledError("stopping");
  }
  absl::StatusOr<std::vector<std::pair<CacheKey, CacheEntry>>> entries = store_.ListEntries();
  if (!entries.ok()) return entries.status();
  for (const auto& [key, entry] : *entries) {
    if (!wanted.contains(key.ToString())) {
      spdlog::info("compile caches: {} no longer wanted on this node", key.ToString());
      (void)store_.RemoveEntry(key);
      retries_.erase(key.ToString());
    } else if (entry.state == CacheState::kExtracted) {
      keep.insert(entry.digest);  // still served while a newer digest is on its way
    }
  }
  Collect(keep);
  return Report();
}

void NodeController::Ensure(const CacheSpec& spec, const std::string& digest) {
  const CacheKey key = KeyOf(spec);
  absl::StatusOr<std::optional<CacheEntry>> current = store_.ReadEntry(key);
  std::optional<CacheEntry> entry = current.ok() ? *current : std::nullopt;
  if (entry && entry->digest == digest && entry->state == CacheState::kExtracted &&
      store_.HasImage(digest)) {
    retries_.erase(key.ToString());
    return;
  }
  Retry& r = retries_[key.ToString()];
  if (r.digest != digest || r.backoff == nullptr) {
    r = Retry{digest, std::make_unique<Backoff>(opts_.retry)};
  }
  if (r.permanent || absl::Now() < r.next) return;
  Pull(spec, key, digest, entry);
}

void NodeController::Pull(const CacheSpec& spec, const CacheKey& key, const std::string& digest,
                          const std::optional<CacheEntry>& current) {
  const bool serving_old = current && current->state == CacheState::kExtracted &&
                           current->digest != digest && store_.HasImage(current->digest);
  CacheEntry pulling =
      serving_old ? *current : Entry(spec, digest, CacheState::kPulling, "Pulling", "");
  pulling.message = absl::StrCat("pulling ", digest);
  SetEntry(key, pulling);
  (void)Report();
  absl::StatusOr<ImageReference> ref = ParseImageReference(ImageWithDigest(spec, digest));
  absl::StatusOr<PullResult> res = ref.ok() ? PullImage(registry_, store_, *ref, Credentials(spec),
                                                        opts_.pull, [this] { return Cancelled(); })
                                            : absl::StatusOr<PullResult>(ref.status());
  if (res.ok()) {
    if (metrics_ != nullptr && !res->already_present) {
      metrics_->Pulled(absl::ToDoubleSeconds(res->fetch_time),
                       absl::ToDoubleSeconds(res->extract_time), res->fetched_bytes,
                       res->info.bytes);
    }
    retries_.erase(key.ToString());
    SetEntry(key, Entry(spec, digest, CacheState::kExtracted, "Extracted",
                        absl::StrCat(res->info.modules, " modules, ", res->info.files, " files, ",
                                     res->info.bytes, " bytes")));
    return;
  }
  if (Cancelled()) return;  // the next start pulls again from scratch
  const FailureReport failure = ClassifyPullError(res.status());
  if (metrics_ != nullptr) metrics_->PullFailed(failure.reason);
  Retry& r = retries_[key.ToString()];
  r.permanent = !failure.retry;
  r.next = absl::Now() + r.backoff->Next();
  spdlog::warn("compile caches: pull failed cache={} digest={} reason={} retry={} error=\"{}\"",
               spec.Describe(), digest, failure.reason,
               r.permanent ? "no" : absl::FormatDuration(r.next - absl::Now()),
               std::string(res.status().message()));
  CacheEntry failed =
      serving_old ? *current : Entry(spec, digest, failure.state, failure.reason, "");
  failed.message = serving_old ? absl::StrCat("update to ", digest, " failed (", failure.reason,
                                              "): ", res.status().message())
                               : std::string(res.status().message());
  SetEntry(key, failed, &spec);
}

CredentialLookup NodeController::Credentials(const CacheSpec& spec) {
  const std::string ns =
      spec.kind == kClusterNeuronCacheKind ? opts_.operator_namespace : spec.namespace_;
  std::vector<nlohmann::json> secrets;
  for (const std::string& name : spec.pull_secrets) {
    absl::StatusOr<nlohmann::json> secret = client_->Get(kSecrets, ns, name);
    if (!secret.ok()) {
      spdlog::warn("compile caches: pull secret {}/{} of {} unreadable error=\"{}\"", ns, name,
                   spec.Describe(), std::string(secret.status().message()));
      continue;
    }
    secrets.push_back(*std::move(secret));
  }
  absl::StatusOr<std::vector<std::string>> configs = DockerConfigsFromSecrets(secrets);
  if (!configs.ok()) {
    spdlog::warn("compile caches: {}", std::string(configs.status().message()));
    return [](const std::string&) { return std::nullopt; };
  }
  return LookupFromDockerConfigs(*std::move(configs));
}

}  // namespace neuron::cache
