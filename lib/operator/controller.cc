// File: lib/operator/controller.cc
#include "lib/operator/controller.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/json_access.h"
#include "lib/k8s/errors.h"
#include "lib/k8s/object_fields.h"
#include "lib/k8s/object_view.h"
#include "spdlog/spdlog.h"

namespace neuron::op {
namespace {

using nlohmann::json;

const json& LabelsOf(const json& obj) { return k8s::ObjectView(obj).labels(); }

// Nodes are cached as identity, labels and taints only: 5,000 full Node objects would be most
// of the operator's memory; the selector reads labels, driver upgrades labels and taints, and
// events name the node.
const JsonKeep& NodeEssentials() {
  static const JsonKeep* keep = new JsonKeep(JsonKeep::Of({
      {"apiVersion"},
      {"kind"},
      k8s::IdentityMetadata({{"labels"}}),
      {"spec", JsonKeep::Of({{"taints"}})},
  }));
  return *keep;
}

}  // namespace

Controller::Controller(k8s::RestClient& client, ControllerOptions opts, k8s::EventRecorder* events,
                       PassObserver observer)
    : client_(client),
      opts_(std::move(opts)),
      observer_(std::move(observer)),
      queue_(k8s::WorkQueueOptions{opts_.base_backoff, opts_.max_backoff}),
      reconciler_(
          client, opts_.settings, [this] { return Nodes(); }, events) {}

Controller::~Controller() { Stop(); }

void Controller::Start() {
  if (started_) return;
  started_ = true;
  configs_ = std::make_unique<k8s::Informer>(client_, DeviceConfigRef(), "");
  configs_->SetFields(k8s::WithoutBookkeeping());
  configs_->AddEventHandler(
      {[this](const k8s::ObjectPtr& o) { Enqueue(k8s::ObjectKey(*o)); },
       [this](const k8s::ObjectPtr&, const k8s::ObjectPtr& o) { Enqueue(k8s::ObjectKey(*o)); },
       [this](const k8s::ObjectPtr& o) { Enqueue(k8s::ObjectKey(*o)); }});

  nodes_ = std::make_unique<k8s::Informer>(client_, k8s::resources::kNodes, "");
  nodes_->SetFields(NodeEssentials());
  nodes_->AddEventHandler({[this](const k8s::ObjectPtr& n) { EnqueueMatching(LabelsOf(*n)); },
                           [this](const k8s::ObjectPtr& old_n, const k8s::ObjectPtr& n) {
                             // Only label changes move the set or an upgrade (KMM's
                             // version.ready label); taints are ours.
                             if (LabelsOf(*old_n) == LabelsOf(*n)) return;
                             EnqueueMatching(LabelsOf(*old_n), &LabelsOf(*n));
                           },
                           [this](const k8s::ObjectPtr& n) { EnqueueMatching(LabelsOf(*n)); }});

  // Every child kind served now is cached (the passes read them there, and a child changed or
  // deleted by someone else starts its owner's pass); a kind served later (KMM installed after
  // the operator) is read from the API until the operator restarts.
  std::vector<k8s::ResourceRef> owned = {k8s::resources::kDaemonSets, k8s::resources::kDeployments};
  if (absl::StatusOr<ClusterApis> apis = reconciler_.DiscoverApis(); apis.ok()) {
    owned = ChildKinds(*apis);
  } else {
    spdlog::warn("discovery failed at start, caching DaemonSets and Deployments only error=\"{}\"",
                 std::string(apis.status().message()));
  }
  reader_.Add(DeviceConfigRef(), configs_.get());
  k8s::ReflectorOptions ropts;
  ropts.label_selector = absl::StrCat(kManagedByLabel, "=", kManagedByValue);
  for (const k8s::ResourceRef& ref : owned) {
    auto inf = std::make_unique<k8s::Informer>(client_, ref, "", ropts);
    inf->SetFields(k8s::WithoutBookkeeping());
    inf->AddEventHandler(
        {[this](const k8s::ObjectPtr& o) { EnqueueOwner(o); },
         [this](const k8s::ObjectPtr&, const k8s::ObjectPtr& o) { EnqueueOwner(o); },
         [this](const k8s::ObjectPtr& o) { EnqueueOwner(o); }});
    reader_.Add(ref, inf.get());
    owned_.push_back(std::move(inf));
  }
  reconciler_.SetReader(&reader_);
  reconciler_.SetDiscoveryMaxAge(opts_.resync);
  nodes_->Start();
  configs_->Start();
  for (auto& inf : owned_) inf->Start();
  for (int i = 0; i < opts_.workers; ++i) workers_.emplace_back([this] { Work(); });
}

void Controller::Stop() {
  if (!started_) return;
  started_ = false;
  queue_.ShutDown();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  for (auto& inf : owned_) inf->Stop();
  if (configs_) configs_->Stop();
  if (nodes_) nodes_->Stop();
}

bool Controller::synced() const {
  if (!configs_ || !nodes_ || !configs_->HasSynced() || !nodes_->HasSynced()) return false;
  for (const auto& inf : owned_) {
    if (!inf->HasSynced()) return false;
  }
  return true;
}

void Controller::WaitForCaches() const {
  // Each informer signals its own first list; the timeout only bounds how late a shutdown
  // during startup is noticed.
  while (!synced() && !queue_.shutting_down()) {
    std::vector<const k8s::Informer*> all = {configs_.get(), nodes_.get()};
    for (const auto& inf : owned_) all.push_back(inf.get());
    for (const k8s::Informer* inf : all) {
      if (inf != nullptr && !inf->HasSynced()) {
        inf->WaitForSync(absl::Seconds(1));
        break;
      }
    }
    if (!configs_ || !nodes_) absl::SleepFor(absl::Seconds(1));  // not started yet
  }
}

size_t Controller::QueueDepth() const { return queue_.Len(); }

void Controller::Enqueue(const std::string& key) { queue_.Add(key); }

void Controller::EnqueueOwner(const k8s::ObjectPtr& obj) {
  // The owner label is "<namespace>.<name>"; namespaces are DNS labels (no dots), so the
  // first dot separates them.
  const std::string owner = StringMember(LabelsOf(*obj), kOwnerLabel);
  const size_t dot = owner.find('.');
  if (dot == std::string::npos) return;
  Enqueue(absl::StrCat(owner.substr(0, dot), "/", owner.substr(dot + 1)));
}

void Controller::EnqueueMatching(const json& labels, const json* new_labels) {
  if (!configs_) return;
  // Matches of the old and the new labels are enqueued at once: two separate rounds could let a
  // worker start the first before the second is added, running one DeviceConfig twice.
  for (const k8s::ObjectPtr& o : configs_->store().List()) {
    absl::StatusOr<DeviceConfig> dc = ParseDeviceConfig(*o);
    if (!dc.ok()) continue;
    if (SelectorMatches(dc->spec.selector, labels) ||
        (new_labels != nullptr && SelectorMatches(dc->spec.selector, *new_labels))) {
      Enqueue(k8s::ObjectKey(*o));
    }
  }
}

absl::StatusOr<std::vector<json>> Controller::Nodes() const {
  std::vector<json> out;
  for (const k8s::ObjectPtr& n : nodes_->store().List()) out.push_back(*n);
  return out;
}

void Controller::Work() {
  while (std::optional<std::string> key = queue_.Get()) {
    // Act on a cache that has listed: a pass on an empty node cache would report no nodes.
    WaitForCaches();
    const std::vector<std::string> parts = absl::StrSplit(*key, absl::MaxSplits('/', 1));
    const absl::Time start = absl::Now();
    absl::StatusOr<ReconcileResult> r = parts.size() == 2
                                            ? reconciler_.Reconcile(parts[0], parts[1])
                                            : absl::InvalidArgumentError("bad key " + *key);
    ++passes_;
    if (observer_) observer_(*key, absl::Now() - start, r);
    if (r.ok()) {
      queue_.Forget(*key);
      queue_.AddAfter(*key, r->requeue_after.value_or(opts_.resync));
    } else if (k8s::IsTerminal(r.status())) {
      // The server refused what we sent: the same pass would be refused again. The status
      // says why; a change of the DeviceConfig (or the resync) starts the next pass.
      spdlog::warn("reconcile refused key={} next_pass_in={} error=\"{}\"", *key,
                   absl::FormatDuration(opts_.resync), r.status().ToString());
      queue_.Forget(*key);
      queue_.AddAfter(*key, opts_.resync);
    } else {
      spdlog::warn("reconcile failed key={} retry_in={} error=\"{}\"", *key,
                   absl::FormatDuration(queue_.NextBackoff(*key)), r.status().ToString());
      queue_.AddRateLimited(*key);
    }
    queue_.Done(*key);
  }
}

}  // namespace neuron::op
