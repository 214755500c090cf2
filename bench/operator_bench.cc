// File: bench/operator_bench.cc
// bench_operator: what a cluster admin waits for, end to end. The real neuron-operator binary
// against the fake-apiserver binary (separate processes) with the DeviceConfig, KMM and NFD
// CRDs installed and --nodes Neuron nodes:
//  1. operator memory once ready and idle;
//  2. DeviceConfig created -> every child it should have exists (polled over the API, as
//     `kubectl get` would see it), for each of --configs DeviceConfigs with disjoint
//     selectors, created one after the other;
//  3. operator memory with all of them reconciled, and again after a settle period;
//  4. idle CPU (share of one core over 10 s with everything reconciled);
//  5. what one pass costs the API server when nothing changed (an annotation poked on one
//     DeviceConfig starts it), counted from the fake's request log, and how many passes one
//     Node label change starts (only the DeviceConfigs selecting the node should run).
// Flags: --nodes=100 --configs=50 --idle-seconds=30
#include <sys/types.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/driver_util.h"
#include "bench/proc_status.h"
#include "lib/k8s/rest_client.h"
#include "lib/k8s/transport.h"
#include "lib/operator/children.h"
#include "lib/operator/reconciler.h"
#include "lib/operator/yaml_input.h"
#include "tests/testing/http_get.h"
#include "tests/testing/subprocess.h"

namespace {

using neuron::testing::Subprocess;
using nlohmann::json;
namespace k8s = neuron::k8s;
namespace op = neuron::op;

using neuron::bench::IntFlag;

int PortFromLog(const Subprocess& p, const std::string& needle, const std::regex& re) {
  const std::string log = p.WaitForLog(needle, absl::Seconds(60));
  std::smatch m;
  return std::regex_search(log, m, re) ? std::stoi(m[1].str()) : -1;
}

std::vector<json> LoadYaml(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  auto docs = op::ParseYamlDocuments(text.str());
  return docs.ok() ? *docs : std::vector<json>{};
}

void PrintMemory(const char* when, pid_t pid) {
  std::printf("operator memory %s: VmRSS %.1f MiB (anon %.1f)  VmHWM %.1f MiB\n", when,
              static_cast<double>(neuron::bench::ProcStatusKiB(pid, "VmRSS")) / 1024.0,
              static_cast<double>(neuron::bench::ProcStatusKiB(pid, "RssAnon")) / 1024.0,
              static_cast<double>(neuron::bench::ProcStatusKiB(pid, "VmHWM")) / 1024.0);
}

double Pct(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

// Sum of every series of `name` on the operator's /metrics.
long MetricSum(int port, const std::string& name) {
  std::istringstream body(neuron::testing::HttpGet(port, "/metrics").body);
  long sum = 0;
  for (std::string line; std::getline(body, line);) {
    if (line.rfind(name, 0) != 0) continue;
    sum += std::atol(line.substr(line.rfind(' ') + 1).c_str());
  }
  return sum;
}

// Waits until `count` has grown by `by` and then stayed put for 500 ms; returns its value.
long WaitSettled(const std::function<long()>& count, long from, long by) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  long last = count();
  while (last < from + by && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
    last = count();
  }
  for (absl::Time quiet = absl::Now(); absl::Now() - quiet < absl::Milliseconds(500);) {
    absl::SleepFor(absl::Milliseconds(20));
    if (const long now = count(); now != last) {
      last = now;
      quiet = absl::Now();
    }
  }
  return last;
}

struct ApiRequests {
  long all = 0, writes = 0;
};

// Requests (not watches) in the fake's debug log so far.
ApiRequests LoggedRequests(const Subprocess& fake) {
  std::istringstream log(fake.Log());
  ApiRequests r;
  for (std::string line; std::getline(log, line);) {
    if (line.find(": request method=") == std::string::npos) continue;
    ++r.all;
    if (line.find("method=GET") == std::string::npos) ++r.writes;
  }
  return r;
}

ApiRequests UnchangedPass(k8s::RestClient& client, const std::string& ns, const Subprocess& fake,
                          int metrics) {
  const long passes = MetricSum(metrics, "neuron_operator_reconcile_total");
  const ApiRequests before = LoggedRequests(fake);
  const json poke = {{"metadata", {{"annotations", {{"bench.k8s.aws/poke", "1"}}}}}};
  (void)client.Patch(op::DeviceConfigRef(), ns, "dc-0", k8s::PatchType::kMerge, poke);
  WaitSettled([&] { return MetricSum(metrics, "neuron_operator_reconcile_total"); }, passes, 1);
  const ApiRequests after = LoggedRequests(fake);
  return {after.all - before.all - 1, after.writes - before.writes - 1};  // less our PATCH
}

long PassesAfterNodeLabel(k8s::RestClient& client, int metrics) {
  const long passes = MetricSum(metrics, "neuron_operator_reconcile_total");
  const json label = {{"metadata", {{"labels", {{"bench.k8s.aws/touched", "1"}}}}}};
  (void)client.Patch(k8s::resources::kNodes, "", "trn-0", k8s::PatchType::kMerge, label);
  return WaitSettled([&] { return MetricSum(metrics, "neuron_operator_reconcile_total"); }, passes,
                     1) -
         passes;
}

}  // namespace

int main(int argc, char** argv) {
  const int nodes = IntFlag(argc, argv, "nodes", 100);
  const int configs = IntFlag(argc, argv, "configs", 50);
  const int idle_seconds = std::max(1, IntFlag(argc, argv, "idle-seconds", 30));
  const std::string bin_dir = std::filesystem::path(argv[0]).parent_path().string();
  const std::string src = NEURON_SOURCE_DIR;
  char t[] = "/tmp/bench-operator-XXXXXX";
  const std::string dir = mkdtemp(t);

  // debug: one log line per request, counted in step 5.
  Subprocess fake({bin_dir + "/fake-apiserver", "--listen=127.0.0.1:0", "--log-level=debug"},
                  dir + "/fake.log");
  static const std::regex kUrl("listening on http://127\\.0\\.0\\.1:([0-9]+)");
  const int port = PortFromLog(fake, "listening on", kUrl);
  if (port <= 0) {
    std::fprintf(stderr, "fake-apiserver did not start\n");
    return 1;
  }
  k8s::ClientConfig cfg;
  cfg.server = absl::StrCat("http://127.0.0.1:", port);
  auto transport = k8s::NewTransport(cfg);
  if (!transport.ok()) return 1;
  k8s::RestClient client(*transport);
  for (const char* crd :
       {"deploy/operator/crd-deviceconfigs.yaml", "tests/operator/testdata/crds/kmm-modules.yaml",
        "tests/operator/testdata/crds/nfd-k8s-sigs.yaml"}) {
    for (const json& doc : LoadYaml(src + "/" + crd)) {
      if (!client.Create(k8s::resources::kCRDs, "", doc).ok()) {
        std::fprintf(stderr, "cannot install %s\n", crd);
        return 1;
      }
    }
  }
  const std::string ns = "aws-neuron-operator";
  (void)client.Create(k8s::resources::kNamespaces, "",
                      {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}});
  for (int i = 0; i < nodes; ++i) {
    (void)client.Create(
        k8s::resources::kNodes, "",
        {{"apiVersion", "v1"},
         {"kind", "Node"},
         {"metadata",
          {{"name", absl::StrCat("trn-", i)},
           {"labels", {{"bench.k8s.aws/group", absl::StrCat("g", i % configs)}}}}}});
  }
  const std::string kubeconfig = dir + "/kubeconfig";
  {
    std::ofstream f(kubeconfig);
    f << "apiVersion: v1\nkind: Config\ncurrent-context: bench\n"
      << "clusters:\n- name: fake\n  cluster:\n    server: " << cfg.server << "\n"
      << "users:\n- name: op\n  user:\n    token: bench\n"
      << "contexts:\n- name: bench\n  context:\n    cluster: fake\n    user: op\n";
  }
  const absl::Time exec = absl::Now();
  Subprocess oper({bin_dir + "/neuron-operator", "--kubeconfig=" + kubeconfig, "--namespace=" + ns,
                   "--health-addr=127.0.0.1:0", "--metrics-addr=127.0.0.1:0"},
                  dir + "/operator.log");
  static const std::regex kHealth("health_port=([0-9]+)");
  static const std::regex kMetrics("metrics_port=([0-9]+)");
  const int health = PortFromLog(oper, "health_port=", kHealth);
  const int metrics = PortFromLog(oper, "metrics_port=", kMetrics);
  bool ready = false;
  while (!ready && absl::Now() - exec < absl::Seconds(30)) {
    ready = health > 0 && neuron::testing::HttpGet(health, "/readyz").status == 200;
    if (!ready) absl::SleepFor(absl::Milliseconds(5));
  }
  if (!ready) {
    std::fprintf(stderr, "operator not ready:\n%s\n", oper.Log().c_str());
    return 1;
  }
  std::printf("operator exec -> /readyz: %.0f ms (%d nodes)\n",
              absl::ToDoubleMilliseconds(absl::Now() - exec), nodes);
  absl::SleepFor(absl::Seconds(2));
  PrintMemory("idle", oper.pid());

  const json sample = LoadYaml(src + "/deploy/operator/samples/deviceconfig-v1beta1.yaml").front();
  op::OperatorSettings settings;
  settings.ns = ns;
  op::ClusterApis apis;  // what the fake serves: KMM and upstream NFD
  std::vector<double> ms;
  for (int i = 0; i < configs; ++i) {
    json dc = sample;
    dc["metadata"] = {{"name", absl::StrCat("dc-", i)}, {"namespace", ns}};
    dc["spec"]["selector"] = {{"bench.k8s.aws/group", absl::StrCat("g", i)}};
    const absl::Time start = absl::Now();
    auto created = client.Create(op::DeviceConfigRef(), ns, dc);
    if (!created.ok()) {
      std::fprintf(stderr, "create: %s\n", created.status().ToString().c_str());
      return 1;
    }
    auto parsed = op::ParseDeviceConfig(*created);
    if (!parsed.ok()) return 1;
    const std::vector<op::Child> want = op::DesiredChildren(*parsed, apis, settings);
    size_t found = 0;
    while (found < want.size() && absl::Now() - start < absl::Seconds(30)) {
      const op::Child& c = want[found];
      auto got =
          client.Get(c.ref, c.ref.namespaced ? ns : "", c.object["metadata"].value("name", ""));
      if (got.ok()) {
        ++found;
      } else {
        absl::SleepFor(absl::Milliseconds(1));
      }
    }
    if (found < want.size()) {
      std::fprintf(stderr, "dc-%d: only %zu of %zu children after 30 s\n", i, found, want.size());
      return 1;
    }
    ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
  }
  std::printf(
      "DeviceConfig created -> all children applied (%d configs, one after another): "
      "p50 %.1f ms  p99 %.1f ms  max %.1f ms\n",
      configs, Pct(ms, 0.5), Pct(ms, 0.99), Pct(ms, 1.0));
  PrintMemory(absl::StrCat("with ", configs, " DeviceConfigs").c_str(), oper.pid());
  absl::SleepFor(absl::Seconds(3));
  PrintMemory("after 3 s settle", oper.pid());

  // Clock ticks are 10 ms: a 30 s window resolves 0.033 % of a core.
  const double cpu_before = neuron::bench::CpuSeconds(oper.pid());
  absl::SleepFor(absl::Seconds(idle_seconds));
  std::printf("operator idle CPU: %.3f %% of one core (%d s, %d configs, %d nodes)\n",
              (neuron::bench::CpuSeconds(oper.pid()) - cpu_before) * 100.0 / idle_seconds,
              idle_seconds, configs, nodes);

  const ApiRequests requests = UnchangedPass(client, ns, fake, metrics);
  std::printf("a pass that changes nothing: %ld API requests (%ld writes)\n", requests.all,
              requests.writes);
  std::printf("passes started by one Node label change: %ld (1 DeviceConfig selects the node)\n",
              PassesAfterNodeLabel(client, metrics));
  oper.Terminate();
  fake.Terminate();
  std::filesystem::remove_all(dir);
  return 0;
}
