// File: lib/dra/dra_app.cc
#include "lib/dra/dra_app.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <functional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "lib/base/startup_pages.h"
#include "lib/base/stop.h"
#include "lib/dra/api_claim_source.h"
#include "lib/dra/dra_metrics.h"
#include "lib/dra/inventory_node.h"
#include "lib/dra/neuron_preparer.h"
#include "lib/dra/node_extras.h"
#include "lib/dra/node_resource_check.h"
#include "lib/dra/slice_publisher.h"
#include "lib/dra/slice_sync.h"
#include "lib/dra/ultraserver_peers.h"
#include "lib/httpserver/http_server.h"
#include "lib/k8s/client_factory.h"
#include "lib/metrics/exposition.h"

#ifndef NEURON_DRA_VERSION
#define NEURON_DRA_VERSION "0.0.0"
#endif

namespace neuron::dra {
namespace {

const char* OnOff(bool b) { return b ? "on" : "off"; }

void LogConfig(const DraAppOptions& o) {
  spdlog::info(
      "dra driver starting driver={} version={} node={} mode={} partitionable_devices={} "
      "device_taints={} compile_caches={} state_dir={} cdi_root={} registrar_dir={} "
      "plugins_dir={} plugins_host_dir={}",
      o.plugin.driver_name, o.version, o.host.node_name,
      o.host.emulate.empty() ? "hardware" : "emulated:" + o.host.emulate, OnOff(o.partitionable),
      OnOff(o.device_taints), OnOff(o.cache_mounts != nullptr), o.state_dir, o.cdi_root,
      o.plugin.registrar_dir, o.plugin.plugins_dir,
      o.plugin.host_plugins_dir.empty() ? o.plugin.plugins_dir : o.plugin.host_plugins_dir);
  if (!o.partitionable) {
    spdlog::info("DRAPartitionableDevices off: whole devices only (no per-core partitions)");
  }
  if (!o.device_taints) {
    spdlog::info("DRADeviceTaints off: unhealthy devices leave the slice instead of a taint");
  }
}

absl::Status MakeDirs(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<k8s::RestClient>> Client(const DraAppOptions& o) {
  if (o.client != nullptr) return o.client;
  absl::StatusOr<std::shared_ptr<k8s::RestClient>> c = k8s::MakeClient(o.kubeconfig);
  if (!c.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the DRA driver needs the API server (--kubeconfig or in-cluster): ",
                     c.status().message()));
  }
  return c;
}

// /healthz, /readyz (registered and published) and /metrics.
void ServeHttp(httpserver::HttpServer& http, const std::string& listen, const DraMetrics& metrics,
               std::function<bool()> ready, std::atomic<int>& port) {
  if (listen.empty()) return;
  metrics::ServeMetrics(http, metrics.sources());
  httpserver::AddHealthEndpoints(http, std::move(ready));
  if (absl::Status s = http.Start(listen); !s.ok()) {
    spdlog::error("metrics server not started listen={} error=\"{}\"", listen,
                  std::string(s.message()));
    return;
  }
  port = http.port();
  spdlog::info("serving metrics listen={} port={}", listen, http.port());
}

// The preparer's options; node facts come from the watcher's latest scan and the UltraServer
// identity read at each claim; the rank-0 node of an UltraServer set from the API.
NeuronPreparerOptions PreparerOptions(const DraAppOptions& o, inventory::Watcher& watcher,
                                      NodeExtras& extras, k8s::RestClient& client) {
  NeuronPreparerOptions p;
  p.driver_name = o.plugin.driver_name;
  p.node_name = o.host.node_name;
  p.cdi_dir = o.cdi_root;
  p.checkpoint_path = (std::filesystem::path(o.state_dir) / "checkpoint.json").string();
  if (!o.host.emulate.empty()) p.device_host_path = inventory::kEmulatedDeviceNode;
  p.node_facts = [&watcher, &extras]() -> absl::StatusOr<NodeFacts> {
    absl::StatusOr<NodeFacts> f = NodeFactsFromInventory(watcher.Current());
    if (f.ok()) {
      f->ultraserver = extras.UltraServer();
    }
    return f;
  };
  p.rank0_host = [&client](const ultraserver::SetMember& m) { return FindRank0Host(client, m); };
  p.cache_mounts = o.cache_mounts;
  return p;
}

// The node's slices from the watcher's latest scan, its UltraServer identity and its labels.
std::function<absl::StatusOr<std::vector<ResourceSliceModel>>()> SliceSource(
    const DraAppOptions& o, inventory::Watcher& watcher, NodeExtras& extras) {
  const SliceOptions sopts{o.partitionable, o.device_taints, 1};
  return [&o, &watcher, &extras, sopts]() -> absl::StatusOr<std::vector<ResourceSliceModel>> {
    absl::StatusOr<NodeDeviceInfo> node =
        NodeDeviceInfoFromInventory(watcher.Current(), o.host.node_name, o.version);
    if (!node.ok()) {
      return node.status();
    }
    if (absl::Status s = extras.Fill(*node); !s.ok()) {
      return s;
    }
    return BuildResourceSlices(*node, sopts);
  };
}

absl::Status CheckOptions(const DraAppOptions& o) {
  if (o.host.node_name.empty()) {
    return absl::InvalidArgumentError("--node-name (or NODE_NAME) is required with --api=dra");
  }
  if (o.cdi_root.empty() || o.state_dir.empty()) {
    return absl::InvalidArgumentError("--cdi-root and --dra-state-dir must not be empty");
  }
  if (!o.host.emulate.empty()) return inventory::CheckEmulatedDeviceNode();
  return absl::OkStatus();
}

// Once registered and published (or after a minute, whatever the API does), the pages gRPC,
// OpenSSL and protobuf touched only while starting are cold: give them back
// (lib/base/startup_pages.h). Roughly halves the driver's RSS.
void ReleaseStartupPagesWhen(absl::Notification& stop, const std::function<bool()>& ready) {
  const absl::Time give_up = absl::Now() + absl::Minutes(1);
  while (!stop.WaitForNotificationWithTimeout(absl::Milliseconds(200))) {
    if (ready() || absl::Now() > give_up) {
      const ReleasedPages r = ReleaseStartupPages();
      spdlog::info("released start-up pages mappings={} supported={}", r.mappings, r.supported);
      return;
    }
  }
}

}  // namespace

DraApp::DraApp(DraAppOptions opts) : opts_(std::move(opts)) {
  if (opts_.version.empty()) opts_.version = NEURON_DRA_VERSION;
}

// Long on purpose: start-up and shutdown in the order each part depends on the other.
absl::Status DraApp::Run(absl::Notification& stop) {
  LogConfig(opts_);
  absl::Status status = CheckOptions(opts_);
  if (status.ok()) status = MakeDirs(opts_.state_dir);
  if (status.ok()) status = MakeDirs(opts_.cdi_root);
  absl::StatusOr<std::shared_ptr<k8s::RestClient>> client = Client(opts_);
  if (status.ok()) status = client.status();
  absl::StatusOr<std::unique_ptr<inventory::WatchedHost>> host =
      status.ok() ? inventory::OpenHost(opts_.host) : status;
  if (!host.ok()) {
    NotifyOnce(stop);
    return host.status();
  }
  inventory::Watcher& watcher = *(*host)->watcher;
  CheckNodeResources(**client, opts_.host.node_name).IgnoreError();  // logs what it finds
  DraMetrics metrics;

  NodeExtras extras(*(*host)->fs, **client, opts_.host.node_name);
  SlicePublisher publisher(**client, opts_.host.node_name);
  SliceSync sync(publisher, SliceSource(opts_, watcher, extras),
                 {opts_.resync, {}, [&metrics](const absl::Status& s, int64_t generation) {
                    metrics.Published(s.ok(), generation);
                  }});
  // The watcher's thread must not wait for the API: it only wakes the publisher.
  watcher.Subscribe([&sync](const inventory::Inventory&) { sync.Trigger(); });

  ApiClaimSource claims(**client);
  absl::StatusOr<std::unique_ptr<NeuronPreparer>> preparer =
      NeuronPreparer::Create(PreparerOptions(opts_, watcher, extras, **client), claims);
  if (!preparer.ok()) {
    NotifyOnce(stop);
    return preparer.status();
  }
  InstrumentedPreparer instrumented(**preparer, metrics);
  KubeletPlugin plugin(opts_.plugin, instrumented);

  httpserver::ServerOptions hopts;
  hopts.threads = 2;  // a scrape or probe every few seconds
  httpserver::HttpServer http(hopts);
  ServeHttp(
      http, opts_.metrics_listen, metrics,
      [&plugin, &sync] { return plugin.registration_status().ok() && sync.published(); },
      metrics_port_);

  sync.Start();
  std::thread poller([&] { watcher.Run(stop); });
  std::thread release([&] {
    ReleaseStartupPagesWhen(stop,
                            [&] { return plugin.registration_status().ok() && sync.published(); });
  });
  status = plugin.Run(stop);
  if (!status.ok()) NotifyOnce(stop);  // a SIGTERM may be notifying it too
  http.Stop();
  release.join();
  poller.join();
  sync.Stop();
  spdlog::info("dra driver stopped; resource slices left in place for the next start");
  return status;
}

}  // namespace neuron::dra
