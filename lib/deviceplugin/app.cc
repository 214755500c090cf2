// File: lib/deviceplugin/app.cc
#include "lib/deviceplugin/app.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

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
#include "lib/inventory/emulation.h"
#include "lib/metrics/exposition.h"
#include "lib/sysfs/fs.h"

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
  std::string root = opts_.host_root;
  if (!opts_.emulate.empty()) {
    absl::StatusOr<std::string> r = inventory::PrepareEmulation(opts_.emulate, opts_.emulate_dir,
                                                                opts_.lnc, opts_.emulate_driver);
    if (!r.ok()) return r.status();
    root = *r;
    spdlog::info("emulating instance_type={} root={}", opts_.emulate, root);
  }
  std::unique_ptr<sysfs::Fs> fs = sysfs::MakeRootedFs(root);
  inventory::WatcherOptions wopts;
  wopts.interval = opts_.poll_interval;
  wopts.health_interval = opts_.health_interval;
  wopts.healthy_after = opts_.healthy_after;
  wopts.scan.node_name = opts_.node_name;
  wopts.scan.instance_type = opts_.emulate;
  wopts.scan.lnc = inventory::LncInputs::FromEnvironment(opts_.lnc);
  inventory::Watcher watcher(*fs, Clock::Real(), wopts);
  watcher.Poll();
  InventorySource source(watcher);
  {
    const inventory::Inventory inv = watcher.Current();
    // A bad --lnc is a startup error; a bad env/file value is logged by the scanner and only
    // withholds neuroncore until it is readable.
    if (opts_.lnc != 0 && !inv.lnc_error.empty()) return absl::InvalidArgumentError(inv.lnc_error);
    spdlog::info(
        "inventory devices={} cores={} physical_cores={} lnc={} lnc_source={} instance_type={}",
        inv.devices.size(), inv.total_cores, inv.total_physical_cores, inv.lnc, inv.lnc_origin,
        inv.instance_type);
  }

  // Pod handshake (optional).
  absl::StatusOr<std::shared_ptr<k8s::RestClient>> api = MakeApiClient(opts_.kubeconfig);
  if (!api.ok()) return api.status();
  std::unique_ptr<CachedPodDirectory> pods;
  std::unique_ptr<Handshake> handshake;
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
    struct stat st {};
    if (::lstat(kEmulatedDeviceNode, &st) != 0 || !S_ISCHR(st.st_mode)) {
      return absl::FailedPreconditionError(absl::StrCat("emulated mode maps ", kEmulatedDeviceNode,
                                                        " to /dev/neuronN, but it is not a "
                                                        "character device here"));
    }
    aopts.device_host_path = kEmulatedDeviceNode;
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
