// File: bench/dra_bench.cc
// The DRA driver as the cluster sees it: the real neuron-device-plugin --api=dra on an emulated
// trn2.48xlarge (16 devices, --dra-device-taints, default 50 ms health interval, healthy-after
// 100 ms), talking to the in-process fake apiserver (real HTTP, through a kubeconfig) and the
// fake DRA kubelet (real unix sockets, real gRPC):
//   (a) fault written into the emulated sysfs -> the device's taint stored on the apiserver
//       (what a scheduler's watch would deliver); --faults=N samples, each at a random phase
//       of the health tick, recovering between them;
//   (b) NodePrepareResources / NodeUnprepareResources latency as the kubelet sees it, one
//       claim per call (--claims=N), each claim read from the apiserver by the driver;
//   (c) the driver's VmRSS / VmHWM from /proc after all of it.
// A load driver, not Google Benchmark: each sample is one event in real time.
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/driver_util.h"
#include "bench/proc_status.h"
#include "lib/sysfs/device_leaves.h"
#include "lib/sysfs/emulator.h"
#include "lib/sysfs/fs.h"
#include "lib/sysfs/neuron_driver.h"
#include "nlohmann/json.hpp"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/fakes/kubelet/dra_fake_kubelet.h"
#include "tests/testing/subprocess.h"

namespace neuron {
namespace {

using nlohmann::json;
constexpr char kNode[] = "bench-node";
constexpr char kSlice[] = "/apis/resource.k8s.io/v1/resourceslices/bench-node-neuron.aws.com-0";

void Report(const char* what, std::vector<double> ms) {
  if (ms.empty()) return;
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) { return ms[std::min(ms.size() - 1, size_t(q * ms.size()))]; };
  std::printf("%-44s n=%zu p50=%.2f ms p90=%.2f ms p99=%.2f ms max=%.2f ms\n", what, ms.size(),
              at(0.5), at(0.9), at(0.99), ms.back());
}

bool Tainted(const fakes::FakeApiServer& api, int device) {
  const json slice = api.Get(kSlice);
  if (!slice.is_object()) return false;
  for (const json& d : slice["spec"]["devices"]) {
    if (d["name"] == absl::StrCat("neurondevice", device)) {
      return d.contains("taints") && !d["taints"].empty();
    }
  }
  return false;
}

template <typename F>
bool WaitFor(F cond, absl::Duration timeout) {
  const absl::Time end = absl::Now() + timeout;
  while (absl::Now() < end) {
    if (cond()) return true;
    absl::SleepFor(absl::Microseconds(500));
  }
  return cond();
}

bool WriteFault(const std::string& root, int d, uint64_t value) {
  auto fs = sysfs::MakeRootedFs(root);
  const std::string& name = sysfs::UncorrectableErrorCounters().front();
  // Where driver 2.30.2 puts it; SetCounter follows the tree's own layout.
  return sysfs::emulation::SetCounter(fs->root(), d, sysfs::FindDeviceLeaf(name)->known, value)
      .ok();
}

// (a) fault -> taint on the apiserver, then wait for the recovery.
std::vector<double> FaultLatencies(const fakes::FakeApiServer& api, const std::string& root,
                                   int faults) {
  std::mt19937 rng(7);
  std::vector<double> ms;
  for (int i = 0; i < faults; ++i) {
    const int d = i % 16;
    absl::SleepFor(absl::Milliseconds(std::uniform_int_distribution<int>(0, 50)(rng)));
    const absl::Time t0 = absl::Now();
    if (!WriteFault(root, d, 1 + i)) return ms;
    if (!WaitFor([&] { return Tainted(api, d); }, absl::Seconds(5))) {
      std::printf("fault %d on device %d: no taint within 5 s\n", i, d);
      continue;
    }
    ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - t0));
    WaitFor([&] { return !Tainted(api, d); }, absl::Seconds(5));
  }
  return ms;
}

std::string PutClaim(fakes::FakeApiServer& api, int i) {
  const std::string name = absl::StrCat("claim-", i);
  const std::string path = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/" + name;
  const json result = {{"request", "neuron"},
                       {"driver", "neuron.aws.com"},
                       {"pool", kNode},
                       {"device", absl::StrCat("neurondevice", i % 16)}};
  const json claim = {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaim"},
      {"metadata", {{"name", name}, {"namespace", "default"}}},
      {"spec",
       {{"devices",
         {{"requests", json::array({{{"name", "neuron"},
                                     {"exactly", {{"deviceClassName", "neuron.aws.com"}}}}})}}}}},
      {"status", {{"allocation", {{"devices", {{"results", json::array({result})}}}}}}}};
  if (!api.Put(path, claim).ok()) return "";
  return api.Get(path)["metadata"]["uid"].get<std::string>();
}

// (b) prepare + unprepare one claim at a time.
void PrepareLatencies(fakes::FakeApiServer& api, fakes::FakeDraKubelet& kubelet, int claims) {
  std::vector<double> prep;
  std::vector<double> unprep;
  int errors = 0;
  for (int i = 0; i < claims; ++i) {
    const std::string uid = PutClaim(api, i);
    const fakes::DraClaim c{"default", absl::StrCat("claim-", i), uid};
    absl::Time t0 = absl::Now();
    auto p = kubelet.NodePrepareResources("neuron.aws.com", {c});
    prep.push_back(absl::ToDoubleMilliseconds(absl::Now() - t0));
    if (!p.ok() || !p->at(uid).error.empty()) ++errors;
    t0 = absl::Now();
    auto u = kubelet.NodeUnprepareResources("neuron.aws.com", {c});
    unprep.push_back(absl::ToDoubleMilliseconds(absl::Now() - t0));
    if (!u.ok() || !u->at(uid).empty()) ++errors;
  }
  Report("NodePrepareResources (1 claim, via gRPC)", prep);
  Report("NodeUnprepareResources (1 claim, via gRPC)", unprep);
  std::printf("prepare/unprepare errors: %d\n", errors);
}

int Main(int argc, char** argv) {
  const int faults = bench::IntFlag(argc, argv, "faults", 50);
  const int claims = bench::IntFlag(argc, argv, "claims", 200);
  const std::string bin_dir = std::filesystem::path(argv[0]).parent_path().string();
  std::string dir = "/tmp/bench-dra-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) return 1;

  fakes::FakeApiServer api;
  fakes::FakeDraKubelet kubelet;
  if (!api.Start().ok() || !kubelet.Start().ok()) return 1;
  (void)api.Put("/api/v1/namespaces/default",
                {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "default"}}}});
  (void)api.Put(std::string("/api/v1/nodes/") + kNode,
                {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", kNode}}}});
  const std::string host = dir + "/host";
  testing::Subprocess driver(
      {bin_dir + "/neuron-device-plugin", "--api=dra", "--emulate=trn2.48xlarge",
       "--emulate-dir=" + host, absl::StrCat("--node-name=", kNode),
       "--kubeconfig=" + bench::WriteKubeconfig(dir, api.port()),
       "--kubelet-registrar-dir=" + kubelet.registrar_dir(),
       "--kubelet-plugins-dir=" + kubelet.plugins_dir(), "--cdi-root=" + dir + "/cdi",
       "--dra-state-dir=" + dir + "/state", "--dra-device-taints", "--healthy-after=100ms",
       "--metrics-listen=", "--log-level=warn"},
      dir + "/driver.log");
  if (!kubelet.WaitForRegistrations(1, absl::Seconds(30)) ||
      !WaitFor([&] { return api.Get(kSlice).is_object(); }, absl::Seconds(30))) {
    std::printf("driver did not start:\n%s\n", driver.Log().c_str());
    return 1;
  }
  std::printf("driver pid=%d VmRSS after start: %ld KiB\n", driver.pid(),
              bench::ProcStatusKiB(driver.pid(), "VmRSS"));
  // The driver gives back its start-up pages once registered and published (it checks every
  // 200 ms): what it holds idle, before any claim.
  absl::SleepFor(absl::Seconds(1));
  std::printf("driver idle: VmRSS=%ld KiB RssAnon=%ld KiB RssFile=%ld KiB\n",
              bench::ProcStatusKiB(driver.pid(), "VmRSS"),
              bench::ProcStatusKiB(driver.pid(), "RssAnon"),
              bench::ProcStatusKiB(driver.pid(), "RssFile"));
  Report("fault in sysfs -> taint on the apiserver", FaultLatencies(api, host, faults));
  PrepareLatencies(api, kubelet, claims);
  std::printf(
      "driver VmRSS=%ld KiB VmHWM=%ld KiB RssAnon=%ld KiB RssFile=%ld KiB\n",
      bench::ProcStatusKiB(driver.pid(), "VmRSS"), bench::ProcStatusKiB(driver.pid(), "VmHWM"),
      bench::ProcStatusKiB(driver.pid(), "RssAnon"), bench::ProcStatusKiB(driver.pid(), "RssFile"));
  const int rc = driver.Terminate();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return rc;
}

}  // namespace
}  // namespace neuron

int main(int argc, char** argv) { return neuron::Main(argc, argv); }
