// File: lib/deviceplugin/app.cc
#include "lib/deviceplugin/app.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <memory>
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

}  // namespace

absl::Status App::Run(absl::Notification& stop) {
  absl::StatusOr<std::unique_ptr<inventory::WatchedHost>> host = inventory::OpenHost(
      {opts_.host_root, opts_.emulate, opts_.emulate_dir, opts_.emulate_driver, opts_.lnc,
       opts_.node_name, opts_.poll_interval, opts_.health_interval, opts_.healthy_after});
  if (!host.ok()) return host.status();
  inventory::Watcher& watcher = *(*host)->watcher;
  InventorySource source(watcher);

  // Pod handshake (optional).
  absl::StatusOr<std::shared_ptr<k8s::RestClient>> api =
      k8s::MakeClientIfConfigured(opts_.kubeconfig);
  if (!api.ok()) return api.status();
  std::unique_ptr<CachedPodDirectory> pods;
  std::unique_ptr<Handshake> handshake;
  if (*api == nullptr) spdlog::info("no kubeconfig and not in a cluster: pod handshake disabled");
  if (*api != nullptr) {
    if (opts_.node_name.empty()) {
      return absl::InvalidArgumentError("--node-name (or NODE_NAME) is required with API access");
    }
    // Pods of this node, cached from a watch: hints and resyncs read memory, not the API.
    pods = std::make_unique<CachedPodDirectory>(*api, opts_.node_name);
    pods->Start();
    if (!pods->WaitForSync(opts_.pod_cache_sync_timeout)) {
      spdlog::warn("pod cache not synced yet node={} (listing from the API until it is)",
                   opts_.node_name);
    }
    const std::string socket = opts_.pod_resources_socket;
    handshake = std::make_unique<Handshake>(*pods, [socket] { return ListPodHoldings(socket); });
  }
  absl::Mutex hs_mu;
  absl::Time hs_due = absl::InfiniteFuture();
  auto on_allocated = [&] {
    absl::MutexLock lock(&hs_mu);
    // The kubelet records the devices after Allocate returns: look a moment later.
    hs_due = std::min(hs_due, absl::Now() + absl::Milliseconds(500));
  };

  // Endpoints, one per resource.
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
  std::vector<std::unique_ptr<Allocator>> allocators;
  std::vector<std::unique_ptr<PluginServer>> servers;
  std::vector<PluginServer*> raw;
  for (assignment::ResourceKind kind : opts_.resources) {
    allocators.push_back(std::make_unique<Allocator>(kind, aopts));
    const std::string socket = (std::filesystem::path(opts_.plugin_dir) /
                                absl::StrCat("aws-", assignment::ShortName(kind), ".sock"))
                                   .string();
    servers.push_back(std::make_unique<PluginServer>(*allocators.back(), source, handshake.get(),
                                                     socket, on_allocated, &ledger));
    servers.back()->set_metrics(&metrics);
    metrics.WatchDevices(*allocators.back(), source);
    raw.push_back(servers.back().get());
  }
  source.Subscribe([&raw] {
    for (PluginServer* s : raw) s->NotifyChanged();
  });

  // Rescans every poll_interval, checks health every health_interval (the first rescan in
  // Run repeats the one above: harmless, and it catches what changed since).
  std::thread poller([&] { watcher.Run(stop); });
  std::thread handshaker;
  if (handshake) {
    handshaker = std::thread([&] {
      absl::Time next = absl::Now();
      while (!stop.HasBeenNotified()) {
        bool due = absl::Now() >= next;
        {
          absl::MutexLock lock(&hs_mu);
          if (absl::Now() >= hs_due) {
            due = true;
            hs_due = absl::InfiniteFuture();
          }
        }
        if (due) {
          if (absl::Status s = handshake->Reconcile(); !s.ok()) {
            spdlog::warn("pod handshake failed error=\"{}\"", std::string(s.message()));
          }
          next = absl::Now() + opts_.handshake_interval;
        }
        stop.WaitForNotificationWithTimeout(absl::Milliseconds(100));
      }
    });
  }

  ManagerOptions mopts;
  mopts.plugin_dir = opts_.plugin_dir;
  mopts.metrics = &metrics;
  PluginManager manager(raw, mopts);
  httpserver::ServerOptions hopts;
  hopts.threads = 2;  // a scrape every few seconds at most
  httpserver::HttpServer http(hopts);
  StartMetricsServer(http, opts_.metrics_listen, metrics, manager);
  absl::Status status = manager.Run(stop);
  if (!status.ok()) NotifyOnce(stop);  // a SIGTERM may be notifying it too
  http.Stop();
  poller.join();
  if (handshaker.joinable()) handshaker.join();
  if (pods) pods->Stop();
  spdlog::info("device plugin stopped");
  return status;
}

}  // namespace neuron::deviceplugin
