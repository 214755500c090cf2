// File: bench/deviceplugin_bench.cc
// Device-plugin latencies, all over real unix sockets with the fake kubelet acting as kubelet:
//   BM_Allocate / BM_GetPreferredAllocation   one gRPC round trip each (kubelet -> plugin)
//   BM_AllocatorPreferred                      the policy alone (no gRPC)
//   BM_HealthToListAndWatch                    health change -> update seen by the kubelet
//                                              (target < 200 ms)
//   BM_ReRegistration                          kubelet restart -> both endpoints registered
//                                              again (target < 1 s)
// The last two use manual time: each iteration measures exactly one event.
#include <benchmark/benchmark.h>

#include <chrono>
#include <thread>

#include "absl/synchronization/notification.h"
#include "lib/deviceplugin/plugin_manager.h"
#include "lib/topology/topology.h"
#include "tests/deviceplugin/fake_device_source.h"
#include "tests/fakes/kubelet/fake_kubelet.h"

namespace neuron::deviceplugin {
namespace {

using testing::FakeDeviceSource;
using testing::SnapshotForShape;

class Node {
 public:
  explicit Node(const char* shape)
      : source_(SnapshotForShape(*topology::FindShape(shape))),
        dev_alloc_(assignment::ResourceKind::kDevice),
        core_alloc_(assignment::ResourceKind::kCore),
        dev_(dev_alloc_, source_, nullptr, kubelet_.dir() + "/aws-neuron.sock"),
        core_(core_alloc_, source_, nullptr, kubelet_.dir() + "/aws-neuroncore.sock"),
        manager_({&dev_, &core_}, Options(kubelet_.dir())) {
    (void)kubelet_.Start();
    source_.Subscribe([this] {
      dev_.NotifyChanged();
      core_.NotifyChanged();
    });
    thread_ = std::thread([this] { (void)manager_.Run(stop_); });
    kubelet_.WaitForRegistrations(2, absl::Seconds(10));
    kubelet_.WaitForDevices(
        assignment::kNeuronCoreResource, [](const auto& r) { return r.devices_size() > 0; },
        absl::Seconds(10));
  }
  ~Node() {
    stop_.Notify();
    thread_.join();
  }
  fakes::FakeKubelet& kubelet() { return kubelet_; }
  FakeDeviceSource& source() { return source_; }

 private:
  static ManagerOptions Options(const std::string& dir) {
    ManagerOptions o;
    o.plugin_dir = dir;
    return o;
  }
  fakes::FakeKubelet kubelet_;
  FakeDeviceSource source_;
  Allocator dev_alloc_, core_alloc_;
  PluginServer dev_, core_;
  PluginManager manager_;
  absl::Notification stop_;
  std::thread thread_;
};

void BM_Allocate(benchmark::State& state) {
  Node node("trn1.32xlarge");
  v1beta1::AllocateRequest req;
  auto* c = req.add_container_requests();
  for (int i = 0; i < state.range(0); ++i) c->add_devices_ids(std::to_string(i));
  for (auto _ : state) {
    auto r = node.kubelet().Allocate(assignment::kNeuronCoreResource, req);
    if (!r.ok()) state.SkipWithError("allocate failed");
  }
}
BENCHMARK(BM_Allocate)->Arg(1)->Arg(8)->Arg(32)->Unit(benchmark::kMicrosecond);

void BM_GetPreferredAllocation(benchmark::State& state) {
  Node node("trn2.48xlarge");  // 64 logical cores
  v1beta1::PreferredAllocationRequest req;
  auto* c = req.add_container_requests();
  for (int i = 0; i < 64; ++i) c->add_available_deviceids(std::to_string(i));
  c->set_allocation_size(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto r = node.kubelet().GetPreferredAllocation(assignment::kNeuronCoreResource, req);
    if (!r.ok()) state.SkipWithError("preferred failed");
  }
}
BENCHMARK(BM_GetPreferredAllocation)->Arg(1)->Arg(4)->Arg(16)->Unit(benchmark::kMicrosecond);

void BM_AllocatorPreferred(benchmark::State& state) {
  const NodeSnapshot node = SnapshotForShape(*topology::FindShape("trn1.32xlarge"));
  Allocator alloc(assignment::ResourceKind::kDevice);
  std::vector<std::string> avail;
  for (int i = 0; i < 16; ++i) avail.push_back(std::to_string(i));
  for (auto _ : state) {
    benchmark::DoNotOptimize(alloc.Preferred(node, avail, {}, static_cast<int>(state.range(0))));
  }
}
BENCHMARK(BM_AllocatorPreferred)->Arg(1)->Arg(4)->Arg(8)->Unit(benchmark::kMicrosecond);

void BM_HealthToListAndWatch(benchmark::State& state) {
  Node node("inf2.48xlarge");
  bool healthy = true;
  for (auto _ : state) {
    healthy = !healthy;
    const int want = healthy ? 12 : 11;
    const auto start = std::chrono::steady_clock::now();
    node.source().SetHealthy(3, healthy);
    const bool seen = node.kubelet().WaitForDevices(
        assignment::kNeuronResource,
        [want](const auto& r) {
          int n = 0;
          for (const auto& d : r.devices()) n += d.health() == "Healthy";
          return n == want;
        },
        absl::Seconds(5));
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - start;
    if (!seen) state.SkipWithError("update not seen");
    state.SetIterationTime(dt.count());
  }
}
BENCHMARK(BM_HealthToListAndWatch)->UseManualTime()->Iterations(50)->Unit(benchmark::kMillisecond);

void BM_ReRegistration(benchmark::State& state) {
  Node node("trn1.32xlarge");
  for (auto _ : state) {
    const int before = node.kubelet().registration_count();
    const auto start = std::chrono::steady_clock::now();
    (void)node.kubelet().Restart();
    const bool ok = node.kubelet().WaitForRegistrations(before + 2, absl::Seconds(5));
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - start;
    if (!ok) state.SkipWithError("not re-registered");
    state.SetIterationTime(dt.count());
  }
}
BENCHMARK(BM_ReRegistration)->UseManualTime()->Iterations(20)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace neuron::deviceplugin

BENCHMARK_MAIN();
