// File: lib/agent/cache_side.cc
#include "lib/agent/cache_side.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "lib/agent/cache_volumes.h"
#include "lib/cache/cache_store.h"
#include "lib/cache/node_controller.h"
#include "lib/cache/node_metrics.h"
#include "lib/csi/csi_node_driver.h"
#include "lib/csi/mounter.h"
#include "spdlog/spdlog.h"

namespace neuron::agent {

struct CacheSide::Parts {
  std::unique_ptr<cache::CacheStore> store;
  std::unique_ptr<cache::CacheMetrics> metrics;
  std::unique_ptr<cache::NodeController> controller;
  std::unique_ptr<CacheVolumes> volumes;
  std::unique_ptr<csi::Mounter> mounter;
  std::unique_ptr<csi::CsiNodeDriver> driver;
  absl::Notification stop_driver;
  std::thread driver_thread;
};

namespace {

cache::NodeControllerOptions ControllerOptions(const CacheSideOptions& opts,
                                               const std::string& node_name,
                                               std::optional<topology::Family> family) {
  cache::NodeControllerOptions c;
  c.node_name = node_name;
  c.operator_namespace = opts.operator_namespace;
  c.pull.family = family;
  c.pull.limits.max_total_bytes = opts.max_bytes;
  c.pull.limits.max_file_bytes = opts.max_bytes;
  c.registry.plain_http = opts.plain_http_registries;
  c.registry.ca_file = opts.registry_ca_file;
  c.registry.stall_timeout = opts.stall_timeout;
  return c;
}

absl::Status StartDriver(const CacheSideOptions& opts, const std::string& node_name,
                         CacheSide::Parts& p) {
  csi::CsiDriverOptions d;
  d.node_id = node_name;
  d.kubelet_dir = opts.kubelet_dir;
  d.plugins_dir = opts.kubelet_dir + "/plugins";
  d.registrar_dir = opts.kubelet_dir + "/plugins_registry";
  d.host_plugins_dir = opts.host_plugins_dir;
  d.state_dir = opts.cache_dir + "/csi";
  p.mounter = csi::DetectMounter(d.state_dir);
  p.driver = std::make_unique<csi::CsiNodeDriver>(d, *p.volumes, *p.mounter);
  p.driver_thread = std::thread([&p] {
    if (absl::Status s = p.driver->Run(p.stop_driver); !s.ok()) {
      spdlog::error("CSI driver {} stopped: {}", cache::kCsiDriverName, s.ToString());
    }
  });
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<CacheSide>> CacheSide::Start(const CacheSideOptions& opts,
                                                            const std::string& node_name,
                                                            std::optional<topology::Family> family,
                                                            std::shared_ptr<k8s::RestClient> client,
                                                            prometheus::Registry& registry) {
  if (client == nullptr) {
    return absl::FailedPreconditionError(
        "compile caches need API access (--kubeconfig or in-cluster); or set --cache-dir=\"\"");
  }
  auto p = std::make_unique<Parts>();
  p->store = std::make_unique<cache::CacheStore>(opts.cache_dir);
  if (absl::Status s = p->store->Init(); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("cache dir ", opts.cache_dir, ": ", s.message()));
  }
  p->metrics = std::make_unique<cache::CacheMetrics>(registry);
  p->controller = std::make_unique<cache::NodeController>(
      std::move(client), *p->store, p->metrics.get(), ControllerOptions(opts, node_name, family));
  cache::NodeController* controller = p->controller.get();
  p->volumes = std::make_unique<CacheVolumes>(*p->store, node_name, p->metrics.get(),
                                              [controller] { controller->Trigger(); });
  if (absl::Status s = p->controller->Start(); !s.ok()) return s;
  if (opts.csi) {
    if (absl::Status s = StartDriver(opts, node_name, *p); !s.ok()) return s;
  }
  spdlog::info("compile caches on dir={} csi={} family={}", opts.cache_dir, opts.csi,
               family ? topology::FamilyName(*family) : "unknown");
  return std::unique_ptr<CacheSide>(new CacheSide(std::move(p)));
}

CacheSide::CacheSide(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

CacheSide::~CacheSide() { Stop(); }

void CacheSide::Stop() {
  Parts& p = *parts_;
  if (!p.stop_driver.HasBeenNotified()) p.stop_driver.Notify();
  if (p.driver_thread.joinable()) p.driver_thread.join();
  if (p.controller) p.controller->Stop();
}

}  // namespace neuron::agent
