#include "lib/deviceplugin/metrics.h"

#include <map>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "lib/metrics/exposition.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace neuron::deviceplugin {
namespace {

const char* Result(bool ok) { return ok ? "ok" : "error"; }

// neuron_deviceplugin_devices, built from the current device lists at each scrape, so it can
// never disagree with what ListAndWatch would send.
class DevicesCollector final : public prometheus::Collectable {
 public:
  void Watch(const Allocator& allocator, const DeviceSource& source) {
    absl::MutexLock lock(&mu_);
    watched_.insert_or_assign(allocator.kind(), std::make_pair(&allocator, &source));
  }

  std::vector<prometheus::MetricFamily> Collect() const override {
    metrics::FamilyBuilder devices(
        "neuron_deviceplugin_devices",
        "Units the device plugin advertises to the kubelet in ListAndWatch (devices for "
        "aws.amazon.com/neuron, logical NeuronCores for aws.amazon.com/neuroncore), by health.",
        prometheus::MetricType::Gauge);
    absl::MutexLock lock(&mu_);
    for (const auto& [kind, watched] : watched_) {
      const auto& [allocator, source] = watched;
      int healthy = 0;
      int unhealthy = 0;
      for (const AdvertisedDevice& d : allocator->Devices(source->Snapshot())) {
        ++(d.healthy ? healthy : unhealthy);
      }
      const std::string resource = assignment::ResourceName(kind);
      devices.Add({{"resource", resource}, {"health", "Healthy"}}, healthy);
      devices.Add({{"resource", resource}, {"health", "Unhealthy"}}, unhealthy);
    }
    std::vector<prometheus::MetricFamily> out;
    if (!devices.empty()) out.push_back(devices.Build());
    return out;
  }

 private:
  mutable absl::Mutex mu_;
  std::map<assignment::ResourceKind, std::pair<const Allocator*, const DeviceSource*>> watched_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace

struct PluginMetrics::Impl {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  std::shared_ptr<DevicesCollector> devices = std::make_shared<DevicesCollector>();
  prometheus::Family<prometheus::Counter>& allocations =
      prometheus::BuildCounter()
          .Name("neuron_deviceplugin_allocations_total")
          .Help(
              "Allocate calls from the kubelet, by resource and result (error: the container "
              "was refused devices and will not start).")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& registrations =
      prometheus::BuildCounter()
          .Name("neuron_deviceplugin_registrations_total")
          .Help(
              "Register calls to the kubelet, by resource and result (errors are retried "
              "with backoff; ok repeats after every kubelet restart).")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& streams =
      prometheus::BuildGauge()
          .Name("neuron_deviceplugin_list_and_watch_streams")
          .Help(
              "Open ListAndWatch streams from the kubelet, by resource (normally 1; 0 = the "
              "kubelet is not watching this resource).")
          .Register(*registry);

  prometheus::Counter& Allocations(assignment::ResourceKind kind, bool ok) {
    return allocations.Add({{"resource", assignment::ResourceName(kind)}, {"result", Result(ok)}});
  }
  prometheus::Counter& Registrations(assignment::ResourceKind kind, bool ok) {
    return registrations.Add(
        {{"resource", assignment::ResourceName(kind)}, {"result", Result(ok)}});
  }
  prometheus::Gauge& Streams(assignment::ResourceKind kind) {
    return streams.Add({{"resource", assignment::ResourceName(kind)}});
  }
};

PluginMetrics::PluginMetrics(const std::vector<assignment::ResourceKind>& resources)
    : impl_(std::make_unique<Impl>()) {
  for (assignment::ResourceKind kind : resources) {
    for (bool ok : {true, false}) {
      impl_->Allocations(kind, ok);
      impl_->Registrations(kind, ok);
    }
    impl_->Streams(kind);
  }
}

PluginMetrics::~PluginMetrics() = default;

void PluginMetrics::AllocateDone(assignment::ResourceKind kind, bool ok) {
  impl_->Allocations(kind, ok).Increment();
}

void PluginMetrics::RegisterDone(assignment::ResourceKind kind, bool ok) {
  impl_->Registrations(kind, ok).Increment();
}

void PluginMetrics::StreamOpened(assignment::ResourceKind kind) {
  impl_->Streams(kind).Increment();
}

void PluginMetrics::StreamClosed(assignment::ResourceKind kind) {
  impl_->Streams(kind).Decrement();
}

void PluginMetrics::WatchDevices(const Allocator& allocator, const DeviceSource& source) {
  impl_->devices->Watch(allocator, source);
}

std::vector<std::weak_ptr<prometheus::Collectable>> PluginMetrics::sources() const {
  return {impl_->registry, impl_->devices};
}

}  // namespace neuron::deviceplugin
