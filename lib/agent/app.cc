#include "lib/agent/app.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "lib/agent/allocation_collector.h"
#include "lib/agent/collector.h"
#include "lib/agent/inventory_json.h"
#include "lib/agent/node_label_publisher.h"
#include "lib/agent/node_labels.h"
#include "lib/agent/pod_attribution_source.h"
#include "lib/base/startup_pages.h"
#include "lib/base/status_macros.h"
#include "lib/base/stop.h"
#include "lib/base/trim_heap.h"
#include "lib/httpserver/gzip.h"
#include "lib/httpserver/http_server.h"
#include "lib/inventory/emulation.h"
#include "lib/inventory/host.h"
#include "lib/inventory/watcher.h"
#include "lib/k8s/client_factory.h"
#include "lib/metrics/exposition.h"
#include "lib/sysfs/fs.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "spdlog/spdlog.h"

namespace neuron::agent {

struct App::State {
  AgentOptions options;
  Clock& clock;
  std::string root;
  bool owns_root = false;  // a temp emulation dir we created and remove on Stop
  std::unique_ptr<sysfs::Fs> fs;
  std::unique_ptr<inventory::Watcher> watcher;
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  std::shared_ptr<InventoryCollector> collector;
  std::unique_ptr<PodAttributionSource> attribution;          // null: pod attribution off
  std::shared_ptr<AllocationCollector> allocation_collector;  // with `attribution`
  std::unique_ptr<NodeLabelPublisher> node_labels;  // null: UltraServer labels not published
  std::unique_ptr<CacheSide> caches;                // null: compile caches off
  prometheus::Histogram* scrape_duration = nullptr;
  prometheus::Gauge* scan_duration = nullptr;
  prometheus::Counter* scans = nullptr;
  prometheus::Counter* label_errors = nullptr;
  prometheus::Counter* node_patch_errors = nullptr;
  httpserver::HttpServer http;
  absl::Notification stop_polling;
  std::thread poller;         // full rescans, every interval
  std::thread health_poller;  // health fast path, every health_interval
  absl::Mutex render_mu;
  std::atomic<bool> ready{false};
  // /metrics is rendered and gzipped once per scan or health change, not per scrape: a
  // trn2.48xlarge page has ~11k samples and scrapes must stay in the low milliseconds. Only the
  // gzipped copy (what Prometheus asks for) stays resident: ~50 KB instead of ~1 MB of text;
  // a client without gzip gets it inflated per scrape.
  absl::Mutex page_mu;
  std::shared_ptr<const std::string> page_gzip ABSL_GUARDED_BY(page_mu);

  State(AgentOptions o, Clock& c) : options(std::move(o)), clock(c) {}

  // The host's sysfs, or an emulated tree, and the watcher over it.
  absl::Status OpenHost() {
    root = options.host_root;
    if (options.emulate_ultraserver && options.emulate.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--emulate-ultraserver needs --emulate=", inventory::kUltraServerShape));
    }
    if (!options.emulate.empty()) {
      if (absl::Status st = inventory::CheckNoRealDevices(options.host_root); !st.ok()) return st;
      auto emulated =
          inventory::PrepareEmulation(options.emulate, options.emulate_dir, options.lnc,
                                      options.emulate_scramble, options.emulate_ultraserver);
      if (!emulated.ok()) return emulated.status();
      root = *emulated;
      owns_root = options.emulate_dir.empty();
      spdlog::info("emulating instance_type={} root={}", options.emulate, root);
    }
    fs = sysfs::MakeRootedFs(root);
    inventory::WatcherOptions wopts;
    wopts.interval = options.interval;
    wopts.health_interval = options.health_interval;
    wopts.healthy_after = options.healthy_after;
    wopts.scan.node_name = options.node_name;
    wopts.scan.instance_type = options.emulate;
    wopts.scan.lnc = inventory::LncInputs::FromEnvironment(options.lnc);
    watcher = std::make_unique<inventory::Watcher>(*fs, clock, wopts);
    return absl::OkStatus();
  }

  // The publisher of the UltraServer node labels, or why there is none (logged once).
  void OpenNodeLabels() {
    if (!options.ultraserver_labels) {
      spdlog::info("UltraServer node labels off (--ultraserver-labels=false)");
      return;
    }
    if (options.node_name.empty()) {
      spdlog::info("UltraServer node labels not published: no --node-name (NODE_NAME)");
      return;
    }
    std::shared_ptr<k8s::RestClient> client = options.client;
    if (client == nullptr) {
      absl::StatusOr<std::shared_ptr<k8s::RestClient>> made =
          k8s::MakeClientIfConfigured(options.kubeconfig);
      if (!made.ok()) {
        spdlog::warn("UltraServer node labels not published: no API client error=\"{}\"",
                     std::string(made.status().message()));
        return;
      }
      client = *std::move(made);
    }
    if (client == nullptr) {
      spdlog::info(
          "UltraServer node labels not published: no --kubeconfig and not in a cluster (no API "
          "access)");
      return;
    }
    NodeLabelPublisherOptions publisher{options.node_name, options.label_backoff,
                                        options.label_check_interval};
    publisher.on_failure = [this] { node_patch_errors->Increment(); };
    node_labels = std::make_unique<NodeLabelPublisher>(std::move(client), std::move(publisher));
  }

  // Compile caches (cache_side.h), when --cache-dir is set: the node's chip comes from the
  // first inventory.
  absl::Status StartCaches() {
    if (options.cache.cache_dir.empty()) return absl::OkStatus();
    std::shared_ptr<k8s::RestClient> client = options.client;
    if (client == nullptr) {
      NEURON_ASSIGN_OR_RETURN(client, k8s::MakeClientIfConfigured(options.kubeconfig));
    }
    std::optional<topology::Family> family;
    for (const auto& d : watcher->Current().devices) {
      if (d.model) family = d.model->family;
    }
    NEURON_ASSIGN_OR_RETURN(caches, CacheSide::Start(options.cache, options.node_name, family,
                                                     std::move(client), *registry));
    return absl::OkStatus();
  }

  // Pod attribution, polled in the scan loop: List right before the page is rendered, so a
  // pod that ended is gone from the next page.
  void OpenPodAttribution() {
    if (options.pod_resources_socket.empty()) {
      spdlog::info("pod attribution off (--pod-resources-socket is empty)");
      return;
    }
    PodAttributionSourceOptions o;
    o.socket = options.pod_resources_socket;
    o.interval = options.interval;
    // Bounded by the interval so a hung kubelet cannot stall the scans for long.
    o.deadline = std::clamp(options.interval / 2, absl::Milliseconds(250), absl::Seconds(2));
    attribution = std::make_unique<PodAttributionSource>(std::move(o), clock);
    allocation_collector =
        std::make_shared<AllocationCollector>([this] { return attribution->Snapshot(); });
  }

  // The agent's own metrics, beside the inventory's.
  void RegisterSelfMetrics() {
    scrape_duration =
        &prometheus::BuildHistogram()
             .Name("neuron_agent_scrape_duration_seconds")
             .Help("Time to answer a /metrics request (the page is rendered once per scan).")
             .Register(*registry)
             .Add({}, prometheus::Histogram::BucketBoundaries{0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                              0.025, 0.1, 0.5});
    scan_duration = &prometheus::BuildGauge()
                         .Name("neuron_agent_scan_duration_seconds")
                         .Help("Duration of the latest sysfs scan.")
                         .Register(*registry)
                         .Add({});
    scans = &prometheus::BuildCounter()
                 .Name("neuron_agent_scans_total")
                 .Help("Sysfs scans performed.")
                 .Register(*registry)
                 .Add({});
    label_errors = &prometheus::BuildCounter()
                        .Name("neuron_agent_label_publish_errors_total")
                        .Help("Failed writes of the NFD features file.")
                        .Register(*registry)
                        .Add({});
    node_patch_errors = &prometheus::BuildCounter()
                             .Name("neuron_agent_node_label_patch_errors_total")
                             .Help(
                                 "Failed patches of the UltraServer labels on the agent's Node "
                                 "(retried with backoff).")
                             .Register(*registry)
                             .Add({});
  }

  // /metrics (the page rendered per scan), /inventory and the health endpoints.
  absl::Status Serve() {
    http.Handle("GET", "/metrics", [this](const httpserver::Request& req) {
      const absl::Time start = absl::Now();
      httpserver::Response res;
      res.content_type = metrics::kTextContentType;
      std::shared_ptr<const std::string> page;
      {
        absl::MutexLock lock(&page_mu);
        page = page_gzip;
      }
      if (page == nullptr) return httpserver::Response::Text(503, "no scan yet\n");
      if (httpserver::AcceptsGzip(req.Header("Accept-Encoding"))) {
        res.gzip_body = std::move(page);
      } else if (auto text = httpserver::GzipDecompress(*page); text.ok()) {
        res.body = *std::move(text);
      } else {
        return httpserver::Response::Text(500, absl::StrCat(text.status().message(), "\n"));
      }
      scrape_duration->Observe(absl::ToDoubleSeconds(absl::Now() - start));
      return res;
    });
    http.Handle("GET", "/inventory", [this](const httpserver::Request&) {
      return httpserver::Response::Json(200, InventoryJson(watcher->Current()));
    });
    httpserver::AddHealthEndpoints(http, [this] { return ready.load(); });
    return http.Start(options.listen);
  }

  void StartPollers() {
    // At a fixed rate, not `interval` after each scan ends: a pod's series must go within one
    // interval of its end, and bench_agent_churn saw a 1 s interval stretch to 1.2-1.3 s.
    poller = std::thread([this] {
      absl::Time next = absl::Now() + options.interval;
      while (!stop_polling.WaitForNotificationWithDeadline(next)) {
        PollOnce();
        next += options.interval;
        // A scan longer than the interval: start the next one at once, without a burst after.
        next = std::max(next, absl::Now());
      }
    });
    if (options.health_interval > absl::ZeroDuration()) {
      // Re-renders /metrics when a fault changed the snapshot, so the next scrape shows it.
      health_poller = std::thread([this] {
        while (!stop_polling.WaitForNotificationWithTimeout(options.health_interval)) {
          if (watcher->PollHealth()) RenderPage();
        }
      });
    }
  }

  void PublishLabels(const inventory::Inventory& inv) {
    if (options.features_dir.empty()) return;
    const absl::Status s =
        WriteFeatureFile(options.features_dir, kFeatureFileName, NodeLabels(inv));
    if (!s.ok()) {
      label_errors->Increment();
      spdlog::warn("cannot publish node labels dir={} error={}", options.features_dir,
                   std::string(s.message()));
    }
  }

  void PollOnce() {
    const absl::Time start = absl::Now();
    watcher->Poll();
    scan_duration->Set(absl::ToDoubleSeconds(absl::Now() - start));
    scans->Increment();
    if (attribution) attribution->Poll(NodeLayoutFrom(watcher->Current()));
    if (collector) RenderPage();
  }

  // Called from the scan thread and the health thread: one render at a time, each from the
  // snapshot current when it starts, so the page last stored is never older than another.
  void RenderPage() {
    absl::MutexLock render_lock(&render_mu);
    auto gzip = std::make_shared<const std::string>(
        httpserver::GzipCompress(metrics::Expose({collector, allocation_collector, registry})));
    {
      absl::MutexLock lock(&page_mu);
      page_gzip = std::move(gzip);
    }
    // Rendering allocates a few MiB of short-lived families; hand the freed pages back to the
    // kernel instead of keeping them resident until the next scan (glibc keeps them otherwise).
    TrimHeap();
  }
};

App::App(AgentOptions options, Clock& clock)
    : state_(std::make_unique<State>(std::move(options), clock)) {}

App::~App() { Stop(); }

absl::Status App::Start() {
  State& s = *state_;
  if (absl::Status st = s.OpenHost(); !st.ok()) return st;
  s.RegisterSelfMetrics();
  s.OpenNodeLabels();
  s.OpenPodAttribution();
  s.watcher->Subscribe([&s](const inventory::Inventory& inv) {
    int healthy = 0;
    for (const auto& d : inv.devices) healthy += d.healthy ? 1 : 0;
    spdlog::info(
        "inventory changed devices={} healthy={} cores={} physical_cores={} lnc={} "
        "instance_type={}",
        inv.devices.size(), healthy, inv.total_cores, inv.total_physical_cores, inv.lnc,
        inv.instance_type);
    s.PublishLabels(inv);
    if (s.node_labels) s.node_labels->Set(inv.ultraserver);
  });
  s.collector = std::make_shared<InventoryCollector>([&s] { return s.watcher->Current(); });
  s.PollOnce();
  // A bad --lnc is a startup error; bad env/file values are reported in /inventory and logs.
  if (const inventory::Inventory inv = s.watcher->Current();
      s.options.lnc != 0 && !inv.lnc_error.empty()) {
    return absl::InvalidArgumentError(inv.lnc_error);
  }
  if (absl::Status st = s.Serve(); !st.ok()) return st;
  s.StartPollers();
  if (s.node_labels) s.node_labels->Start();  // patches once started: nothing on a failed start
  if (absl::Status st = s.StartCaches(); !st.ok()) return st;
  s.ready = true;
  return absl::OkStatus();
}

void App::Stop() {
  State& s = *state_;
  s.ready = false;
  NotifyOnce(s.stop_polling);  // Stop() runs twice: from Run() and the destructor
  if (s.poller.joinable()) s.poller.join();
  if (s.health_poller.joinable()) s.health_poller.join();
  if (s.node_labels) s.node_labels->Stop();
  if (s.caches) s.caches->Stop();
  s.http.Stop();
  if (s.owns_root) {
    std::error_code ec;
    std::filesystem::remove_all(s.root, ec);
    s.owns_root = false;
  }
}

absl::Status App::Run(absl::Notification& stop) {
  NEURON_RETURN_IF_ERROR(Start());
  spdlog::info("node agent ready port={} node={}", state_->http.port(), state_->options.node_name);
  // Started and serving: the library pages only start-up touched are cold
  // (lib/base/startup_pages.h).
  const ReleasedPages released = ReleaseStartupPages();
  spdlog::debug("released start-up pages mappings={} supported={}", released.mappings,
                released.supported);
  stop.WaitForNotification();
  spdlog::info("node agent stopping");
  Stop();
  return absl::OkStatus();
}

int App::port() const { return state_->http.port(); }
std::string App::host_root() const { return state_->root; }

}  // namespace neuron::agent
