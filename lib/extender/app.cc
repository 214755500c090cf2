// File: lib/extender/app.cc
#include "lib/extender/app.h"

#include <spdlog/spdlog.h>

#include <limits>

#include "lib/extender/binder.h"
#include "lib/extender/cluster_view.h"
#include "lib/extender/leader_fence.h"
#include "lib/extender/node.h"
#include "lib/extender/pod.h"
#include "lib/extender/service.h"
#include "lib/extender/view_feed.h"
#include "lib/httpserver/http_server.h"
#include "lib/k8s/client_factory.h"
#include "lib/metrics/exposition.h"
#include "prometheus/registry.h"

namespace neuron::extender {

absl::StatusOr<std::shared_ptr<k8s::RestClient>> MakeClient(const std::string& kubeconfig) {
  return k8s::MakeClient(kubeconfig);
}

struct App::State {
  ClusterView view;
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  std::unique_ptr<Binder> binder;
  std::unique_ptr<Service> service;
  std::unique_ptr<ViewFeed> nodes, pods;
  std::unique_ptr<LeaderFence> fence;
  std::unique_ptr<httpserver::HttpServer> http, metrics;
};

App::App(AppOptions opts, std::shared_ptr<k8s::RestClient> client)
    : opts_(std::move(opts)), client_(std::move(client)) {}

App::~App() { Stop(); }

ClusterView& App::view() { return s_->view; }

bool App::ready() const {
  return s_ && s_->nodes && s_->pods && s_->nodes->synced() && s_->pods->synced();
}

int App::port() const { return s_ && s_->http ? s_->http->port() : -1; }

int App::metrics_port() const { return s_ && s_->metrics ? s_->metrics->port() : -1; }

absl::Status App::Start() {
  if (!client_) {
    absl::StatusOr<std::shared_ptr<k8s::RestClient>> c = MakeClient(opts_.kubeconfig);
    if (!c.ok()) return c.status();
    client_ = *c;
  }
  s_ = std::make_unique<State>();
  State& s = *s_;
  BindOptions bopts;
  bopts.reservation_ttl = opts_.reservation_ttl;
  bopts.group_reservation_ttl = opts_.group_reservation_ttl;
  bopts.scheduler_name = opts_.scheduler_name;
  s.binder = std::make_unique<Binder>(*client_, s.view, nullptr, bopts);
  s.service = std::make_unique<Service>(s.view, s.binder.get(), opts_.policy, s.registry);

  // No object cache: the feeds parse each Node and Pod into the view's typed records.
  s.nodes = std::make_unique<ViewFeed>(*client_, s.view, ViewFeed::Source::kNodes);
  s.pods = std::make_unique<ViewFeed>(*client_, s.view, ViewFeed::Source::kPods);
  if (absl::Status st = StartFence(); !st.ok()) return st;

  httpserver::ServerOptions hopts;
  hopts.threads = opts_.threads;
  hopts.tcp_nodelay = true;
  // kube-scheduler calls filter, prioritize and bind for every pod over a few kept-alive
  // connections; 5 requests per connection made it reconnect every other pod. Still
  // bounded: each connection holds one of the worker threads while it lives, and a reconnect
  // lets a connection queued behind the busy ones in.
  hopts.keep_alive_max_requests = 100;
  hopts.max_body_bytes = size_t{64} << 20;  // full-Nodes mode at thousands of nodes
  hopts.read_timeout_seconds = 30;
  // kube-scheduler's Go client asks for gzip on every call. Compressing a full-Nodes answer
  // (tens of MB) costs more than sending it over the cluster network ever does, and a
  // NodeNames answer is a few KB: the extender answers uncompressed.
  hopts.gzip_min_bytes = std::numeric_limits<size_t>::max();
  s.http = std::make_unique<httpserver::HttpServer>(hopts);
  s.service->Register(*s.http);
  httpserver::AddHealthEndpoints(*s.http, [this] { return ready(); });
  metrics::ServeMetrics(*s.http, {s.registry});
  if (!opts_.metrics_listen.empty()) {
    httpserver::ServerOptions mopts;
    mopts.threads = 2;
    s.metrics = std::make_unique<httpserver::HttpServer>(mopts);
    httpserver::AddHealthEndpoints(*s.metrics, [this] { return ready(); });
    metrics::ServeMetrics(*s.metrics, {s.registry});
  }
  return Serve();
}

absl::Status App::StartFence() {
  if (opts_.leader_lease.empty()) return absl::OkStatus();
  absl::StatusOr<std::pair<std::string, std::string>> lease = ParseLeaseName(opts_.leader_lease);
  if (!lease.ok()) return lease.status();
  ViewFeed* pods = s_->pods.get();
  s_->fence = std::make_unique<LeaderFence>(*client_, lease->first, lease->second,
                                            [pods] { return pods->Resync(absl::Seconds(60)); });
  s_->fence->Init();  // before the first list: the term that list is fresh for
  s_->service->SetFence(s_->fence.get());
  return absl::OkStatus();
}

absl::Status App::Serve() {
  State& s = *s_;
  s.nodes->Start();
  s.pods->Start();
  absl::Status st = s.http->Start(opts_.listen);
  if (st.ok() && s.metrics) st = s.metrics->Start(opts_.metrics_listen);
  if (!st.ok()) {
    s.http->Stop();
    s.nodes->Stop();
    s.pods->Stop();
    return st;
  }
  spdlog::info(
      "scheduler extender serving listen={} port={} scheduler={} leader_lease={} metrics_listen={}",
      opts_.listen, s.http->port(), opts_.scheduler_name,
      opts_.leader_lease.empty() ? "none" : opts_.leader_lease,
      opts_.metrics_listen.empty() ? "none" : opts_.metrics_listen);
  return absl::OkStatus();
}

void App::Stop() {
  if (!s_) return;
  if (s_->metrics) s_->metrics->Stop();
  if (s_->http) s_->http->Stop();  // finish in-flight binds first
  if (s_->nodes) s_->nodes->Stop();
  if (s_->pods) s_->pods->Stop();
}

absl::Status App::Run(absl::Notification& stop) {
  if (absl::Status s = Start(); !s.ok()) return s;
  stop.WaitForNotification();
  spdlog::info("shutting down");
  Stop();
  return absl::OkStatus();
}

}  // namespace neuron::extender
