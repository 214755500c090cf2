// File: lib/deviceplugin/app.cc
#include "lib/deviceplugin/app.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "lib/base/clock.h"
#include "lib/base/stop.h"
#include "lib/deviceplugin/handshake.h"
#include "lib/deviceplugin/inventory_source.h"
#include "lib/deviceplugin/k8s_pod_directory.h"
#include "lib/deviceplugin/metrics.h"
#include "lib/deviceplugin/plugin_manager.h"
#include "lib/deviceplugin/pod_cache.h"
#include "lib/deviceplugin/silicon_ledger.h"
#include "lib/httpserver/http_server.h"
#include "lib/inventory/host.h"
#include "lib/k8s/client_factory.h"
#include "lib/metrics/exposition.h"
#include "lib/ultraserver/read_identity.h"

namespace neuron::deviceplugin {
namespace {

// /metrics, /healthz, and /readyz (200 while every endpoint is registered with the kubelet).
void StartMetricsServer(httpserver::HttpServer& http, const std::string& listen,
                        const PluginMetrics& metrics, const PluginManager& manager) {
  if (listen.empty()) return;
  metrics::ServeMetrics(http, metrics.sources());
  httpserver::AddHealthEndpoints(http, [&manager] { return manager.all_registered(); });
  if (absl::Status s = http.Start(listen); !s.ok()) {
    spdlog::error("metrics server not started listen={} error=\"{}\"", listen,
                  std::string(s.message()));
    return;
  }
  spdlog::info("serving metrics listen={} port={}", listen, http.port());
}

// The pod handshake with the scheduler extender, when the API is reachable: pods of this node
// cached from a watch (hints and resyncs read memory, not the API) and the Handshake over them.
struct PodHandshake {
  std::unique_ptr<CachedPodDirectory> pods;
  std::unique_ptr<Handshake> handshake;  // null: no API access, handshake disabled
};

absl::StatusOr<PodHandshake> StartPodHandshake(const AppOptions& opts) {
  absl::StatusOr<std::shared_ptr<k8s::RestClient>> api =
      k8s::MakeClientIfConfigured(opts.kubeconfig);
  if (!api.ok()) return api.status();
  PodHandshake out;
  if (*api == nullptr) {
    spdlog::info("no kubeconfig and not in a cluster: pod handshake disabled");
    return out;
  }
  if (opts.node_name.empty()) {
    return absl::InvalidArgumentError("--node-name (or NODE_NAME) is required with API access");
  }
  out.pods = std::make_unique<CachedPodDirectory>(*api, opts.node_name);
  out.pods->Start();
  if (!out.pods->WaitForSync(opts.pod_cache_sync_timeout)) {
    spdlog::warn("pod cache not synced yet node={} (listing from the API until it is)",
                 opts.node_name);
  }
  const std::string socket = opts.pod_resources_socket;
  out.handshake =
      std::make_unique<Handshake>(*out.pods, [socket] { return ListPodHoldings(socket); });
  return out;
}

// Reconciles the handshake every `interval`, and half a second after an Allocate (the kubelet
// records the devices only after Allocate returns).
class HandshakeLoop {
 public:
  HandshakeLoop(Handshake& handshake, absl::Duration interval)
      : handshake_(handshake), interval_(interval) {}

  void AfterAllocate() {
    absl::MutexLock lock(&mu_);
    due_ = std::min(due_, absl::Now() + absl::Milliseconds(500));
  }

  void Run(absl::Notification& stop) {
    absl::Time next = absl::Now();
    while (!stop.HasBeenNotified()) {
      if (TakeDue() || absl::Now() >= next) {
        if (absl::Status s = handshake_.Reconcile(); !s.ok()) {
          spdlog::warn("pod handshake failed error=\"{}\"", std::string(s.message()));
        }
        next = absl::Now() + interval_;
      }
      stop.WaitForNotificationWithTimeout(absl::Milliseconds(100));
    }
  }

 private:
  bool TakeDue() {
    absl::MutexLock lock(&mu_);
    if (absl::Now() < due_) return false;
    due_ = absl::InfiniteFuture();
    return true;
  }

  Handshake& handshake_;
  const absl::Duration interval_;
  absl::Mutex mu_;
  absl::Time due_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
};

// One plugin endpoint (allocator + gRPC server) per resource the plugin advertises.
struct Endpoints {
  std::vector<std::unique_ptr<Allocator>> allocators;
  std::vector<std::unique_ptr<PluginServer>> servers;
  std::vector<PluginServer*> raw;
};

// What every endpoint shares.
struct EndpointDeps {
  InventorySource& source;
  Handshake* handshake;  // null: no pod handshake
  std::function<void()> on_allocated;
  SiliconLedger* ledger;
  PluginMetrics* metrics;
  IdentityFn identity;  // this node's UltraServer identity, for group pods' environment
};

Endpoints MakeEndpoints(const AppOptions& opts, const AllocatorOptions& aopts,
                        const EndpointDeps& deps) {
  Endpoints e;
  for (assignment::ResourceKind kind : opts.resources) {
    e.allocators.push_back(std::make_unique<Allocator>(kind, aopts));
    const std::string socket = (std::filesystem::path(opts.plugin_dir) /
                                absl::StrCat("aws-", assignment::ShortName(kind), ".sock"))
                                   .string();
    e.servers.push_back(std::make_unique<PluginServer>(
        *e.allocators.back(), deps.source, deps.handshake, socket, deps.on_allocated, deps.ledger));
    e.servers.back()->set_metrics(deps.metrics);
    e.servers.back()->set_ultraserver_identity(deps.identity);
    deps.metrics->WatchDevices(*e.allocators.back(), deps.source);
    e.raw.push_back(e.servers.back().get());
  }
  return e;
}

}  // namespace

absl::Status App::Run(absl::Notification& stop) {
  absl::StatusOr<std::unique_ptr<inventory::WatchedHost>> host =
      inventory::OpenHost({opts_.host_root, opts_.emulate, opts_.emulate_dir,
                           opts_.emulate_scramble, opts_.lnc, opts_.node_name, opts_.poll_interval,
                           opts_.health_interval, opts_.healthy_after, opts_.emulate_ultraserver});
  if (!host.ok()) return host.status();
  inventory::Watcher& watcher = *(*host)->watcher;
  InventorySource source(watcher);

  absl::StatusOr<PodHandshake> hs = StartPodHandshake(opts_);
  if (!hs.ok()) return hs.status();
  std::optional<HandshakeLoop> hs_loop;
  if (hs->handshake) hs_loop.emplace(*hs->handshake, opts_.handshake_interval);

  AllocatorOptions aopts;
  aopts.numbering = opts_.numbering;
  if (!opts_.emulate.empty()) {
    // The runtime opens host paths on the host, where the emulated tree does not exist.
    if (absl::Status s = inventory::CheckEmulatedDeviceNode(); !s.ok()) return s;
    aopts.device_host_path = inventory::kEmulatedDeviceNode;
  }
  // Keeps aws.amazon.com/neuron and aws.amazon.com/neuroncore off each other's silicon, from
  // the kubelet's PodResources (also after our restart) plus our own recent Allocates.
  const std::string pr_socket = opts_.pod_resources_socket;
  SiliconLedger ledger([pr_socket] { return ListPodHoldings(pr_socket); }, Clock::Real());
  PluginMetrics metrics(opts_.resources);  // outlives the servers, which count into it
  auto on_allocated = [&hs_loop] {
    if (hs_loop) hs_loop->AfterAllocate();
  };
  // The driver's class attributes are the truth about this node's UltraServer (read at each
  // group pod's Allocate: the driver's election may have changed them since start).
  const sysfs::Fs* fs = (*host)->fs.get();
  IdentityFn identity = [fs] { return ultraserver::ReadIdentity(*fs); };
  Endpoints endpoints = MakeEndpoints(
      opts_, aopts, {source, hs->handshake.get(), on_allocated, &ledger, &metrics, identity});
  source.Subscribe([&endpoints] {
    for (PluginServer* s : endpoints.raw) s->NotifyChanged();
  });

  // Rescans every poll_interval, checks health every health_interval (the first rescan in
  // Run repeats the one above: harmless, and it catches what changed since).
  std::thread poller([&] { watcher.Run(stop); });
  std::thread handshaker;
  if (hs_loop) handshaker = std::thread([&] { hs_loop->Run(stop); });

  ManagerOptions mopts;
  mopts.plugin_dir = opts_.plugin_dir;
  mopts.metrics = &metrics;
  PluginManager manager(endpoints.raw, mopts);
  httpserver::ServerOptions hopts;
  hopts.threads = 2;  // a scrape every few seconds at most
  httpserver::HttpServer http(hopts);
  StartMetricsServer(http, opts_.metrics_listen, metrics, manager);
  absl::Status status = manager.Run(stop);
  if (!status.ok()) NotifyOnce(stop);  // a SIGTERM may be notifying it too
  http.Stop();
  poller.join();
  if (handshaker.joinable()) handshaker.join();
  if (hs->pods) hs->pods->Stop();
  spdlog::info("device plugin stopped");
  return status;
}

}  // namespace neuron::deviceplugin
