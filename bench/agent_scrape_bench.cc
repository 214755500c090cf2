// Load driver: starts the real neuron-node-agent on an emulated host, scrapes /metrics N times
// over loopback (a new connection each time, as Prometheus does per scrape), and prints latency
// percentiles plus the agent's resident memory (VmRSS now, VmHWM peak) from /proc.
//
//   bench_agent_scrape [--shape=trn2.48xlarge] [--scrapes=2000]
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "bench/proc_status.h"
#include "tests/testing/http_get.h"
#include "tests/testing/subprocess.h"

namespace {

std::string Flag(int argc, char** argv, const std::string& name, const std::string& fallback) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--" + name + "=", 0) == 0) return arg.substr(name.size() + 3);
  }
  return fallback;
}

using neuron::bench::ProcStatusKiB;

}  // namespace

int main(int argc, char** argv) {
  const std::string shape = Flag(argc, argv, "shape", "trn2.48xlarge");
  int scrapes = 2000;
  (void)absl::SimpleAtoi(Flag(argc, argv, "scrapes", "2000"), &scrapes);
  char t[] = "/tmp/bench-agent-XXXXXX";
  const std::string dir = mkdtemp(t);
  const std::string bin_dir = std::filesystem::path(argv[0]).parent_path().string();
  neuron::testing::Subprocess agent(
      {bin_dir + "/neuron-node-agent", "--emulate=" + shape, "--emulate-dir=" + dir + "/host",
       "--listen=127.0.0.1:0", "--interval=5s"},
      dir + "/agent.log");
  const std::string log = agent.WaitForLog("node agent ready", absl::Seconds(30));
  std::smatch m;
  static const std::regex kPort("listening address=127\\.0\\.0\\.1:([0-9]+)");
  int port = -1;
  if (std::regex_search(log, m, kPort)) port = std::stoi(m[1].str());
  const pid_t pid = agent.pid();
  if (port <= 0) {
    std::fprintf(stderr, "agent did not start:\n%s\n", agent.Log().c_str());
    return 1;
  }
  const auto first = neuron::testing::HttpGet(port, "/metrics");
  size_t samples = 0;
  for (size_t i = 0; i < first.body.size(); ++i) {
    if ((i == 0 || first.body[i - 1] == '\n') && first.body[i] != '#') ++samples;
  }
  // As Prometheus scrapes: a new connection per scrape; once plain, once with gzip.
  for (const std::string encoding : {"identity", "gzip"}) {
    std::vector<double> ms;
    size_t bytes = 0;
    ms.reserve(static_cast<size_t>(scrapes));
    for (int i = 0; i < scrapes; ++i) {
      const absl::Time start = absl::Now();
      const auto r = neuron::testing::HttpGetRaw(port, "/metrics", {{"Accept-Encoding", encoding}});
      ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
      bytes = r.body.size();
      if (r.status != 200) {
        std::fprintf(stderr, "scrape %d failed: %d\n", i, r.status);
        return 1;
      }
    }
    std::sort(ms.begin(), ms.end());
    auto pct = [&](double p) { return ms[static_cast<size_t>(p * (ms.size() - 1))]; };
    std::printf(
        "agent scrape %s (%s, %zu samples, %zu bytes sent, %d scrapes): p50 %.3f ms  "
        "p99 %.3f ms  max %.3f ms\n",
        encoding.c_str(), shape.c_str(), samples, bytes, scrapes, pct(0.50), pct(0.99), ms.back());
  }
  const long rss = ProcStatusKiB(pid, "VmRSS");
  const long hwm = ProcStatusKiB(pid, "VmHWM");
  const long anon = ProcStatusKiB(pid, "RssAnon");
  const long file = ProcStatusKiB(pid, "RssFile");
  std::printf("agent memory: VmRSS %.1f MiB (anon %.1f, file %.1f)  VmHWM %.1f MiB\n", rss / 1024.0,
              anon / 1024.0, file / 1024.0, hwm / 1024.0);
  agent.Terminate();
  std::filesystem::remove_all(dir);
  return 0;
}
