// File: lib/operator/app.cc
#include "lib/operator/app.h"

#include <unistd.h>

#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "lib/httpserver/http_server.h"
#include "lib/k8s/client_factory.h"
#include "lib/k8s/leader_election.h"
#include "lib/metrics/exposition.h"
#include "lib/operator/operator_metrics.h"
#include "lib/operator/registry_resolver.h"
#include "prometheus/registry.h"
#include "spdlog/spdlog.h"

namespace neuron::op {
namespace {

std::string DefaultIdentity() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::random_device rd;
  return absl::StrCat(host, "_", absl::Hex(rd(), absl::kZeroPad8));
}

// ":8080" -> "0.0.0.0:8080" (Go's spelling of "every address").
std::string ListenSpec(const std::string& addr) {
  return !addr.empty() && addr[0] == ':' ? "0.0.0.0" + addr : addr;
}

}  // namespace

struct App::State {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  OperatorMetrics op_metrics{*registry};
  CacheMetrics cache_metrics{*registry};
  std::unique_ptr<k8s::EventRecorder> events;
  std::unique_ptr<Controller> controller;
  std::unique_ptr<CacheController> caches;
  std::unique_ptr<k8s::LeaderElector> elector;
  std::thread elector_thread;
  absl::Notification lost;
  std::atomic<bool> leading{false};
  std::unique_ptr<httpserver::HttpServer> health, metrics;
};

App::App(AppOptions opts, std::shared_ptr<k8s::RestClient> client)
    : opts_(std::move(opts)), client_(std::move(client)) {}

App::~App() { Stop(); }

bool App::leading() const { return s_ && s_->leading.load(); }

// Ready: serving, and if leading, the caches have listed (a standby replica is ready too:
// it is doing its job, which is to wait).
bool App::ready() const {
  if (!s_) return false;
  if (!s_->leading.load()) return true;
  return s_->controller && s_->controller->synced();
}

int App::health_port() const { return s_ && s_->health ? s_->health->port() : -1; }
int App::metrics_port() const { return s_ && s_->metrics ? s_->metrics->port() : -1; }
Controller* App::controller() { return s_ ? s_->controller.get() : nullptr; }
CacheController* App::cache_controller() { return s_ ? s_->caches.get() : nullptr; }

// Long on purpose: start-up in dependency order (client, leader lease, servers, controller),
// each step a few lines that read best in sequence.
absl::Status App::Start() {
  if (!client_) {
    absl::StatusOr<std::shared_ptr<k8s::RestClient>> c = k8s::MakeClient(opts_.kubeconfig);
    if (!c.ok()) return c.status();
    client_ = *c;
  }
  s_ = std::make_unique<State>();
  State& s = *s_;
  s.events = std::make_unique<k8s::EventRecorder>(*client_, "neuron-operator");
  s.controller = std::make_unique<Controller>(
      *client_, opts_.controller, s.events.get(),
      [this](const std::string& key, absl::Duration took,
             const absl::StatusOr<ReconcileResult>& result) {
        s_->op_metrics.ObservePass(key, took, result, s_->controller->QueueDepth());
      });
  if (opts_.caches) {
    if (opts_.digest_resolver == nullptr) {
      opts_.digest_resolver = std::make_shared<RegistryDigestResolver>(
          *client_, opts_.controller.settings.ns, opts_.registry);
    }
    CacheObserver observer{[this](const std::string& key, std::optional<bool> ready) {
                             s_->cache_metrics.SetReady(key, ready);
                           },
                           [this](const std::string&) { s_->cache_metrics.CountResolveFailure(); }};
    s.caches = std::make_unique<CacheController>(*client_, opts_.digest_resolver.get(),
                                                 opts_.cache_controller, std::move(observer));
  }

  httpserver::ServerOptions hopts;
  hopts.threads = 2;
  s.health = std::make_unique<httpserver::HttpServer>(hopts);
  httpserver::AddHealthEndpoints(*s.health, [this] { return ready(); });
  s.metrics = std::make_unique<httpserver::HttpServer>(hopts);
  metrics::ServeMetrics(*s.metrics, {s.registry});
  if (absl::Status st = s.health->Start(ListenSpec(opts_.health_addr)); !st.ok()) {
    return absl::Status(st.code(), absl::StrCat("--health-addr: ", st.message()));
  }
  if (absl::Status st = s.metrics->Start(ListenSpec(opts_.metrics_addr)); !st.ok()) {
    return absl::Status(st.code(), absl::StrCat("--metrics-addr: ", st.message()));
  }

  spdlog::info("operator serving health_port={} metrics_port={} namespace={}", s.health->port(),
               s.metrics->port(), opts_.controller.settings.ns);
  auto lead = [this] {
    s_->leading = true;
    s_->op_metrics.SetLeader(true);
    spdlog::info("leading: starting the DeviceConfig controller{}",
                 s_->caches ? " and the cache controller" : "");
    s_->controller->Start();
    if (s_->caches) s_->caches->Start();
  };
  if (!opts_.leader_elect) {
    lead();
    return absl::OkStatus();
  }
  k8s::LeaderElectionConfig cfg;
  cfg.lease_namespace = opts_.controller.settings.ns;
  cfg.lease_name = opts_.lease_name;
  cfg.identity = opts_.identity.empty() ? DefaultIdentity() : opts_.identity;
  cfg.lease_duration = opts_.lease_duration;
  cfg.renew_deadline = opts_.renew_deadline;
  cfg.retry_period = opts_.retry_period;
  cfg.callbacks.on_started_leading = lead;
  cfg.callbacks.on_stopped_leading = [this] {
    s_->leading = false;
    s_->op_metrics.SetLeader(false);
  };
  cfg.callbacks.on_new_leader = [](const std::string& id) {
    spdlog::info("leader is identity={}", id);
  };
  s.elector = std::make_unique<k8s::LeaderElector>(*client_, cfg);
  if (absl::Status st = s.elector->Validate(); !st.ok()) return st;
  spdlog::info("campaigning for lease={}/{} identity={}", cfg.lease_namespace, cfg.lease_name,
               cfg.identity);
  s.elector_thread = std::thread([this] {
    const absl::Status st = s_->elector->Run();
    if (!st.ok()) {
      spdlog::error("leader lease lost: {}", st.ToString());
      s_->lost.Notify();
    }
  });
  return absl::OkStatus();
}

void App::Stop() {
  if (!s_) return;
  if (s_->caches) s_->caches->Stop();
  if (s_->controller) s_->controller->Stop();  // finish the passes in flight first
  if (s_->elector) s_->elector->Stop();        // then release the lease
  if (s_->elector_thread.joinable()) s_->elector_thread.join();
  if (s_->health) s_->health->Stop();
  if (s_->metrics) s_->metrics->Stop();
  s_.reset();
}

absl::Status App::Run(absl::Notification& stop) {
  if (absl::Status s = Start(); !s.ok()) return s;
  while (!stop.WaitForNotificationWithTimeout(absl::Milliseconds(200))) {
    if (s_->lost.HasBeenNotified()) {
      Stop();
      return absl::AbortedError("lost the leader lease; exiting so a restart campaigns again");
    }
  }
  spdlog::info("shutting down");
  Stop();
  return absl::OkStatus();
}

}  // namespace neuron::op
