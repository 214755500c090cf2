// File: lib/operator/controller.cc
#include "lib/operator/controller.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/json_access.h"
#include "lib/k8s/discovery.h"
#include "lib/k8s/errors.h"
#include "spdlog/spdlog.h"

namespace neuron::op {
namespace {

using nlohmann::json;

const json& LabelsOf(const json& obj) {
  static const json kNone = json::object();
  const json* labels = MemberAt(obj, {"metadata", "labels"});
  return labels != nullptr && labels->is_object() ? *labels : kNone;
}

// Nodes are cached as identity, labels and taints only: 5,000 full Node objects would be most
// of the operator's memory; the selector reads labels, driver upgrades labels and taints, and
// events name the node.
void KeepNodeEssentials(json& node) {
  json slim = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata",
                {{"name", StringAt(node, {"metadata", "name"})},
                 {"uid", StringAt(node, {"metadata", "uid"})},
                 {"resourceVersion", StringAt(node, {"metadata", "resourceVersion"})},
                 {"labels", LabelsOf(node)}}}};
  if (const json* taints = MemberAt(node, {"spec", "taints"})) slim["spec"]["taints"] = *taints;
  node = std::move(slim);
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
  configs_->SetTransform(k8s::TrimObject);
  configs_->AddEventHandler(
      {[this](const k8s::ObjectPtr& o) { Enqueue(k8s::ObjectKey(*o)); },
       [this](const k8s::ObjectPtr&, const k8s::ObjectPtr& o) { Enqueue(k8s::ObjectKey(*o)); },
       [this](const k8s::ObjectPtr& o) { Enqueue(k8s::ObjectKey(*o)); }});

  nodes_ = std::make_unique<k8s::Informer>(client_, k8s::resources::kNodes, "");
  nodes_->SetTransform(KeepNodeEssentials);
  nodes_->AddEventHandler({[this](const k8s::ObjectPtr& n) { EnqueueMatching(LabelsOf(*n)); },
                           [this](const k8s::ObjectPtr& old_n, const k8s::ObjectPtr& n) {
                             // Only label changes move the set or an upgrade (KMM's
                             // version.ready label); taints are ours.
                             if (LabelsOf(*old_n) == LabelsOf(*n)) return;
                             EnqueueMatching(LabelsOf(*old_n));
                             EnqueueMatching(LabelsOf(*n));
                           },
                           [this](const k8s::ObjectPtr& n) { EnqueueMatching(LabelsOf(*n)); }});

  // Owned workloads: their status changes drive the conditions. Modules only if KMM is served
  // now; a KMM installed later is seen by the periodic resync.
  std::vector<k8s::ResourceRef> owned = {k8s::resources::kDaemonSets, k8s::resources::kDeployments};
  k8s::Discovery discovery(client_);
  if (auto kmm = discovery.IsServed("kmm.sigs.x-k8s.io", "v1beta1", "modules"); kmm.ok() && *kmm) {
    owned.push_back({"kmm.sigs.x-k8s.io", "v1beta1", "modules", true});
  }
  k8s::ReflectorOptions ropts;
  ropts.label_selector = absl::StrCat(kManagedByLabel, "=", kManagedByValue);
  for (const k8s::ResourceRef& ref : owned) {
    auto inf = std::make_unique<k8s::Informer>(client_, ref, "", ropts);
    inf->SetTransform(k8s::TrimObject);
    inf->AddEventHandler(
        {[this](const k8s::ObjectPtr& o) { EnqueueOwner(o); },
         [this](const k8s::ObjectPtr&, const k8s::ObjectPtr& o) { EnqueueOwner(o); },
         [this](const k8s::ObjectPtr& o) { EnqueueOwner(o); }});
    owned_.push_back(std::move(inf));
  }
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

void Controller::EnqueueMatching(const json& labels) {
  if (!configs_) return;
  for (const k8s::ObjectPtr& o : configs_->store().List()) {
    absl::StatusOr<DeviceConfig> dc = ParseDeviceConfig(*o);
    if (dc.ok() && SelectorMatches(dc->spec.selector, labels)) Enqueue(k8s::ObjectKey(*o));
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
