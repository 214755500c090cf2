// File: bench/health_bench.cc
// Health latency as the user waits for it, on an emulated trn2.48xlarge (16 devices), with the
// default --interval (5 s full rescan) and --health-interval (50 ms fast path):
//   (a) fault written into the tree -> the fake kubelet's ListAndWatch stream shows the device
//       Unhealthy: the real device plugin App (in-process, real unix sockets, real gRPC);
//       fault written -> a scrape of the real agent App's /metrics shows it (gzip scrapes, as
//       Prometheus sends them, every 5 ms); 50 faults each, recovering between them
//       (healthy_after 100 ms), each written at a random phase of the health tick;
//   (b) CPU of the health fast path alone: a thread doing only PollHealth() every
//       health_interval for 10 s, getrusage(RUSAGE_THREAD), as % of one core.
// A load driver, not Google Benchmark: each sample is one event in real time.
#include <sys/resource.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "lib/agent/app.h"
#include "lib/base/clock.h"
#include "lib/deviceplugin/app.h"
#include "lib/inventory/emulation.h"
#include "lib/inventory/watcher.h"
#include "lib/sysfs/device_leaves.h"
#include "lib/sysfs/emulator.h"
#include "lib/sysfs/neuron_driver.h"
#include "spdlog/spdlog.h"
#include "tests/fakes/kubelet/fake_kubelet.h"
#include "tests/testing/http_get.h"

namespace neuron {
namespace {

constexpr char kShape[] = "trn2.48xlarge";
constexpr int kDevices = 16;
constexpr int kFaults = 50;
absl::Duration health_interval = absl::Milliseconds(50);  // argv[1] sets it ("100ms")
constexpr absl::Duration kHealthyAfter = absl::Milliseconds(100);

std::string TempDir(const char* name) {
  const char* base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
  std::string t = absl::StrCat(base, "/", name, "-XXXXXX");
  if (mkdtemp(t.data()) == nullptr) return "";
  return t;
}

// Raises device `d`'s first uncorrectable counter to `value`, at the file lib/sysfs names.
bool WriteFault(const sysfs::Fs& fs, int d, uint64_t value) {
  const std::string& name = sysfs::UncorrectableErrorCounters().front();
  // Where driver 2.30.2 puts it; SetCounter follows the tree's own layout.
  return sysfs::emulation::SetCounter(fs.root(), d, sysfs::FindDeviceLeaf(name)->known, value).ok();
}

void Report(const char* what, std::vector<double> ms) {
  if (ms.empty()) {
    std::printf("%-48s no samples\n", what);
    return;
  }
  std::sort(ms.begin(), ms.end());
  auto pct = [&](double p) { return ms[std::min(ms.size() - 1, size_t(p * ms.size()))]; };
  std::printf("%-48s n=%zu p50=%.1f ms p99=%.1f ms max=%.1f ms\n", what, ms.size(), pct(0.5),
              pct(0.99), ms.back());
}

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

// Faults land at a random phase of the health tick, as real ones do: right after a recovery
// (which is itself published on a tick) a write would always wait one whole tick.
void RandomPause(std::mt19937& rng) {
  std::uniform_int_distribution<int> us(0, absl::ToInt64Microseconds(health_interval));
  absl::SleepFor(absl::Microseconds(us(rng)));
}

// A gzip /metrics scrape, as Prometheus sends it, inflated here ("" on any failure).
std::string Scrape(int port) {
  const testing::HttpResult r =
      testing::HttpGetRaw(port, "/metrics", {{"Accept-Encoding", "gzip"}});
  if (r.status != 200 || r.content_encoding != "gzip") return r.body;
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return "";
  std::string out;
  char buf[1 << 16];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(r.body.data()));
  z.avail_in = static_cast<uInt>(r.body.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - z.avail_out);
  }
  inflateEnd(&z);
  return rc == Z_STREAM_END ? out : "";
}

std::string HealthOf(const v1beta1::ListAndWatchResponse& r, int d) {
  for (const auto& dev : r.devices()) {
    if (dev.id() == std::to_string(d)) return dev.health();
  }
  return "";
}

void PluginLatency() {
  const std::string tmp = TempDir("health-bench-plugin");
  fakes::FakeKubelet kubelet;
  if (!kubelet.Start().ok()) return;
  deviceplugin::AppOptions o;
  o.plugin_dir = kubelet.dir();
  o.emulate = kShape;
  o.emulate_dir = tmp + "/host";
  o.health_interval = health_interval;
  o.healthy_after = kHealthyAfter;
  deviceplugin::App app(o);
  absl::Notification stop;
  std::thread t([&] { (void)app.Run(stop); });
  const std::string res = "aws.amazon.com/neuron";
  auto all_healthy = [](const v1beta1::ListAndWatchResponse& r) {
    int n = 0;
    for (const auto& dev : r.devices()) n += dev.health() == "Healthy";
    return n == kDevices;
  };
  std::vector<double> ms;
  if (kubelet.WaitForDevices(res, all_healthy, absl::Seconds(30))) {
    auto fs = sysfs::MakeRootedFs(o.emulate_dir);
    std::mt19937 rng(1);
    for (int i = 0; i < kFaults; ++i) {
      RandomPause(rng);
      const int d = i % kDevices;
      const absl::Time start = absl::Now();
      if (!WriteFault(*fs, d, i + 1)) break;
      if (!kubelet.WaitForDevices(
              res, [d](const auto& r) { return HealthOf(r, d) == "Unhealthy"; },
              absl::Seconds(10))) {
        break;
      }
      ms.push_back(Ms(absl::Now() - start));
      if (!kubelet.WaitForDevices(res, all_healthy, absl::Seconds(10))) break;
    }
  }
  Report("fault write -> ListAndWatch Unhealthy (plugin)", ms);
  stop.Notify();
  t.join();
  std::filesystem::remove_all(tmp);
}

void AgentLatency() {
  const std::string tmp = TempDir("health-bench-agent");
  agent::AgentOptions o;
  o.emulate = kShape;
  o.emulate_dir = tmp + "/host";
  o.listen = "127.0.0.1:0";
  o.health_interval = health_interval;
  o.healthy_after = kHealthyAfter;
  agent::App app(o, Clock::Real());
  std::vector<double> ms;
  if (app.Start().ok()) {
    auto fs = sysfs::MakeRootedFs(app.host_root());
    // Scrapes until the page has `line`; returns when the matching response arrived.
    auto scrape_until = [&](const std::string& line, absl::Time deadline) {
      while (absl::Now() < deadline) {
        if (Scrape(app.port()).find(line) != std::string::npos) return true;
        absl::SleepFor(absl::Milliseconds(5));
      }
      return false;
    };
    std::mt19937 rng(2);
    for (int i = 0; i < kFaults; ++i) {
      RandomPause(rng);
      const int d = i % kDevices;
      const std::string bad = absl::StrCat("\nneuron_device_healthy{device=\"", d, "\"} 0\n");
      const std::string good = absl::StrCat("\nneuron_device_healthy{device=\"", d, "\"} 1\n");
      const absl::Time start = absl::Now();
      if (!WriteFault(*fs, d, i + 1)) break;
      if (!scrape_until(bad, start + absl::Seconds(10))) break;
      ms.push_back(Ms(absl::Now() - start));
      if (!scrape_until(good, absl::Now() + absl::Seconds(10))) break;
    }
  }
  Report("fault write -> /metrics shows it (agent)", ms);
  app.Stop();
  std::filesystem::remove_all(tmp);
}

void FastPathCpu(absl::Duration interval) {
  const std::string tmp = TempDir("health-bench-cpu");
  auto root = inventory::PrepareEmulation(kShape, tmp + "/host");
  if (!root.ok()) return;
  auto fs = sysfs::MakeRootedFs(*root);
  inventory::WatcherOptions wo;
  wo.health_interval = interval;
  inventory::Watcher watcher(*fs, Clock::Real(), wo);
  watcher.Poll();
  constexpr absl::Duration kRun = absl::Seconds(10);
  double cpu_s = 0;
  int checks = 0;
  std::thread t([&] {
    rusage before{}, after{};
    getrusage(RUSAGE_THREAD, &before);
    const absl::Time end = absl::Now() + kRun;
    while (absl::Now() < end) {
      watcher.PollHealth();
      ++checks;
      absl::SleepFor(interval);
    }
    getrusage(RUSAGE_THREAD, &after);
    auto secs = [](const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; };
    cpu_s =
        secs(after.ru_utime) - secs(before.ru_utime) + secs(after.ru_stime) - secs(before.ru_stime);
  });
  t.join();
  std::printf("%-48s %.3f %% of one core (%d checks, %.0f us CPU each)\n",
              absl::StrCat("health fast path CPU, every ", absl::FormatDuration(interval)).c_str(),
              100.0 * cpu_s / absl::ToDoubleSeconds(kRun), checks, 1e6 * cpu_s / checks);
  std::filesystem::remove_all(tmp);
}

}  // namespace
}  // namespace neuron

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::err);  // one warn line per fault would dominate the output
  if (argc > 1 && !absl::ParseDuration(argv[1], &neuron::health_interval)) {
    std::fprintf(stderr, "usage: %s [health_interval, default 50ms]\n", argv[0]);
    return 2;
  }
  std::printf("emulated %s, %d devices, health_interval %s, healthy_after %s\n", neuron::kShape,
              neuron::kDevices, absl::FormatDuration(neuron::health_interval).c_str(),
              absl::FormatDuration(neuron::kHealthyAfter).c_str());
  neuron::PluginLatency();
  neuron::AgentLatency();
  neuron::FastPathCpu(absl::Milliseconds(100));
  neuron::FastPathCpu(absl::Milliseconds(50));
  return 0;
}
