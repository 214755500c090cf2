// Load driver: how long an emulated node takes to start, median of --runs (default 5):
//   * the real neuron-node-agent --emulate=<shape> (default temporary tree directory) from
//     fork/exec until /readyz answers 200;
//   * the real neuron-device-plugin --emulate=<shape> until both resources are registered with
//     the fake kubelet;
//   * WriteEmulatedTree alone, into a fresh directory on tmpfs (/dev/shm) and on disk (/var/tmp).
// Target: < 500 ms for the largest shape (trn2.48xlarge).
//
//   bench_emulated_start [--shape=trn2.48xlarge] [--runs=5] [--only=writer]
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/inventory/emulation.h"
#include "lib/sysfs/emulator.h"
#include "lib/topology/topology.h"
#include "tests/fakes/kubelet/fake_kubelet.h"
#include "tests/testing/http_get.h"
#include "tests/testing/subprocess.h"

namespace {

namespace fs = std::filesystem;

std::string Flag(int argc, char** argv, const std::string& name, const std::string& fallback) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--" + name + "=", 0) == 0) return arg.substr(name.size() + 3);
  }
  return fallback;
}

int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

double Median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string Describe(const std::vector<double>& v) {
  if (v.empty()) return "failed";
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  char buf[96];
  std::snprintf(buf, sizeof(buf), "median %.1f ms (min %.1f, max %.1f, %zu runs)", Median(v), *lo,
                *hi, v.size());
  return buf;
}

// The root= the binary logged for its emulated tree, or "?".
std::string LoggedRoot(const std::string& log) {
  static const std::regex kRoot("emulated host written [^\\n]* root=([^ \\n]+)");
  std::smatch m;
  return std::regex_search(log, m, kRoot) ? m[1].str() : "?";
}

// Fork/exec of the agent until /readyz is 200 (polled every 2 ms); -1 on failure.
double AgentStartMs(const std::string& bin_dir, const std::string& shape, const std::string& dir,
                    std::string* root) {
  const int port = FreePort();
  const absl::Time start = absl::Now();
  neuron::testing::Subprocess agent({bin_dir + "/neuron-node-agent", "--emulate=" + shape,
                                     absl::StrCat("--listen=127.0.0.1:", port), "--interval=5s"},
                                    dir + "/agent.log");
  const absl::Time deadline = start + absl::Seconds(60);
  double ms = -1;
  while (absl::Now() < deadline && agent.Running()) {
    if (neuron::testing::HttpGet(port, "/readyz").status == 200) {
      ms = absl::ToDoubleMilliseconds(absl::Now() - start);
      break;
    }
    absl::SleepFor(absl::Milliseconds(2));
  }
  *root = LoggedRoot(agent.Log());
  if (ms < 0) std::fprintf(stderr, "agent not ready:\n%s\n", agent.Log().c_str());
  agent.Terminate();
  return ms;
}

// Fork/exec of the device plugin until both resources are registered with the fake kubelet.
double PluginStartMs(const std::string& bin_dir, const std::string& shape, const std::string& dir,
                     std::string* root) {
  neuron::fakes::FakeKubelet kubelet;
  if (!kubelet.Start().ok()) return -1;
  const absl::Time start = absl::Now();
  neuron::testing::Subprocess plugin({bin_dir + "/neuron-device-plugin", "--emulate=" + shape,
                                      "--device-plugin-dir=" + kubelet.dir()},
                                     dir + "/plugin.log");
  double ms = -1;
  if (kubelet.WaitForRegistrations(2, absl::Seconds(60))) {
    ms = absl::ToDoubleMilliseconds(absl::Now() - start);
  }
  *root = LoggedRoot(plugin.Log());
  if (ms < 0) std::fprintf(stderr, "plugin not registered:\n%s\n", plugin.Log().c_str());
  plugin.Terminate();
  return ms;
}

// WriteEmulatedTree alone into a fresh directory under `parent`; -1 on failure.
double WriteTreeMs(const std::string& parent, const neuron::sysfs::EmulationSpec& spec,
                   size_t* files) {
  std::string tmpl = parent + "/bench-emulated-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) return -1;
  const absl::Time start = absl::Now();
  const bool ok = neuron::sysfs::WriteEmulatedTree(tmpl, spec).ok();
  const double ms = absl::ToDoubleMilliseconds(absl::Now() - start);
  *files = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(tmpl, ec); it != fs::end(it); ++it) ++*files;
  fs::remove_all(tmpl, ec);
  return ok ? ms : -1;
}

bool IsTmpfs(const std::string& dir) {
  struct statfs s {};
  return ::statfs(dir.c_str(), &s) == 0 && s.f_type == 0x01021994;  // TMPFS_MAGIC
}

void BenchWriter(const std::string& shape_name, int runs) {
  const neuron::topology::Shape* shape = neuron::topology::FindShape(shape_name);
  if (shape == nullptr) return;
  const auto spec = neuron::inventory::BuildEmulationSpec(*shape, 0);
  if (!spec.ok()) return;
  for (const std::string parent : {"/dev/shm", "/var/tmp"}) {
    std::vector<double> ms;
    size_t files = 0;
    for (int i = 0; i < runs; ++i) {
      const double t = WriteTreeMs(parent, *spec, &files);
      if (t >= 0) ms.push_back(t);
    }
    std::printf("WriteEmulatedTree %s into %s (%s, %zu entries): %s\n", shape_name.c_str(),
                parent.c_str(), IsTmpfs(parent) ? "tmpfs" : "disk", files, Describe(ms).c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string shape = Flag(argc, argv, "shape", "trn2.48xlarge");
  int runs = 5;
  (void)absl::SimpleAtoi(Flag(argc, argv, "runs", "5"), &runs);
  runs = std::max(runs, 1);
  if (Flag(argc, argv, "only", "") == "writer") {
    for (const std::string s : {"trn1.32xlarge", "trn2.48xlarge"}) BenchWriter(s, runs);
    return 0;
  }
  char t[] = "/tmp/bench-emustart-XXXXXX";
  const std::string dir = mkdtemp(t);
  const std::string bin_dir = fs::path(argv[0]).parent_path().string();
  std::vector<double> agent_ms, plugin_ms;
  std::string agent_root, plugin_root;
  for (int i = 0; i < runs; ++i) {
    const double a = AgentStartMs(bin_dir, shape, dir, &agent_root);
    if (a >= 0) agent_ms.push_back(a);
    const double p = PluginStartMs(bin_dir, shape, dir, &plugin_root);
    if (p >= 0) plugin_ms.push_back(p);
  }
  std::printf("node agent --emulate=%s exec to /readyz 200 (tree in %s): %s\n", shape.c_str(),
              agent_root.c_str(), Describe(agent_ms).c_str());
  std::printf("device plugin --emulate=%s exec to 2 registrations (tree in %s): %s\n",
              shape.c_str(), plugin_root.c_str(), Describe(plugin_ms).c_str());
  const double target = 500;
  std::printf("target < %.0f ms for %s: agent %s, device plugin %s\n", target, shape.c_str(),
              !agent_ms.empty() && Median(agent_ms) < target ? "met" : "NOT met",
              !plugin_ms.empty() && Median(plugin_ms) < target ? "met" : "NOT met");
  for (const std::string s : {"trn1.32xlarge", "trn2.48xlarge"}) BenchWriter(s, runs);
  std::error_code ec;
  fs::remove_all(dir, ec);
  return agent_ms.empty() || plugin_ms.empty() ? 1 : 0;
}
