// File: bench/extender_cycle_bench.cc
// bench_extender_cycle: what one scheduled pod costs the control plane through our extender.
// A synthetic 5,000-node cluster is preloaded into an in-process fake kube-apiserver (so its
// request counts can be read), the real neuron-scheduler-extender binary watches it, and N
// pending pods are scheduled as kube-scheduler does it: /filter over a window of node names,
// /prioritize over the survivors, /bind to the best-scored node. Figures:
//   - API requests per scheduled pod (all, writes, reads), made by the extender;
//   - extender CPU time per scheduled pod (user + system, from /proc, over filter + prioritize +
//     bind and the watch events the binds cause);
//   - wall time per cycle as this driver sees it.
// Targets (issue 19): one write per pod and < 1 ms of extender CPU per pod.
// Flags: --nodes=5000 --pods=5000 --pending=500 --names=500
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/cluster_gen.h"
#include "bench/driver_util.h"
#include "bench/proc_status.h"
#include "httplib.h"
#include "tests/fakes/apiserver/fake_apiserver.h"
#include "tests/testing/http_get.h"
#include "tests/testing/subprocess.h"

namespace {

using neuron::testing::Subprocess;
using nlohmann::json;

using neuron::bench::CpuSeconds;
using neuron::bench::IntFlag;
using neuron::bench::WriteKubeconfig;

// The request counts the extender caused, by what they cost the apiserver.
struct Requests {
  size_t all = 0, writes = 0;
  static Requests Of(const neuron::fakes::FakeApiServer& s) {
    Requests r;
    r.all = s.RequestCount("", "");
    for (const char* m : {"POST", "PUT", "PATCH", "DELETE"}) r.writes += s.RequestCount(m, "");
    return r;
  }
};

// The highest-scored host of a HostPriorityList (first of equals, as kube-scheduler's
// selectHost picks one of them).
std::string BestHost(const json& priorities) {
  std::string best;
  int64_t top = -1;
  for (const json& hp : priorities) {
    if (hp.value("Score", int64_t{-1}) > top) {
      top = hp["Score"];
      best = hp.value("Host", "");
    }
  }
  return best;
}

struct Cycles {
  int bound = 0, unschedulable = 0, errors = 0;
  double seconds = 0;
};

Cycles ScheduleAll(int port, const std::vector<json>& pods, const std::vector<std::string>& names,
                   int window) {
  httplib::Client cli("127.0.0.1", port);
  cli.set_keep_alive(true);
  cli.set_tcp_nodelay(true);
  cli.set_read_timeout(30, 0);
  std::mt19937 rng(11);
  Cycles c;
  const absl::Time start = absl::Now();
  for (const json& pod : pods) {
    std::vector<std::string> pick;
    const size_t first = rng() % names.size();
    for (int k = 0; k < window; ++k) pick.push_back(names[(first + k) % names.size()]);
    const json args = {{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", pick}};
    auto f = cli.Post("/filter", args.dump(), "application/json");
    if (!f || f->status != 200) {
      ++c.errors;
      continue;
    }
    const json passed = json::parse(f->body).value("NodeNames", json::array());
    if (!passed.is_array() || passed.empty()) {
      ++c.unschedulable;
      continue;
    }
    auto p = cli.Post("/prioritize",
                      json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", passed}}.dump(),
                      "application/json");
    if (!p || p->status != 200) {
      ++c.errors;
      continue;
    }
    const json bind = {{"PodName", pod["metadata"]["name"]},
                       {"PodNamespace", pod["metadata"]["namespace"]},
                       {"PodUID", pod["metadata"]["uid"]},
                       {"Node", BestHost(json::parse(p->body))}};
    auto b = cli.Post("/bind", bind.dump(), "application/json");
    if (!b || b->status != 200 || !json::parse(b->body).value("Error", "").empty()) {
      ++c.errors;
      continue;
    }
    ++c.bound;
  }
  c.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const int nodes = IntFlag(argc, argv, "nodes", 5000);
  const int bound_pods = IntFlag(argc, argv, "pods", 5000);
  const int pending = IntFlag(argc, argv, "pending", 500);
  const int window = IntFlag(argc, argv, "names", 500);
  char t[] = "/tmp/bench-cycle-XXXXXX";
  const std::string dir = mkdtemp(t);
  const std::string bin_dir = std::filesystem::path(argv[0]).parent_path().string();

  const neuron::bench::SyntheticCluster cluster =
      neuron::bench::GenerateCluster({nodes, bound_pods});
  neuron::fakes::FakeApiServer api;
  {
    std::stringstream ndjson;
    neuron::bench::WriteNdjson(cluster, ndjson);
    if (auto s = api.Preload(ndjson); !s.ok() || !api.Start().ok()) {
      std::fprintf(stderr, "fake apiserver: %s\n", std::string(s.message()).c_str());
      return 1;
    }
  }
  Subprocess ext({bin_dir + "/neuron-scheduler-extender", "--listen=127.0.0.1:0",
                  "--kubeconfig=" + WriteKubeconfig(dir, api.port()), "--log-level=info"},
                 dir + "/extender.log");
  static const std::regex kPort("port=([0-9]+)");
  std::smatch m;
  const std::string log = ext.WaitForLog("scheduler extender serving", absl::Seconds(60));
  const int port = std::regex_search(log, m, kPort) ? std::stoi(m[1].str()) : -1;
  if (port <= 0) {
    std::fprintf(stderr, "extender did not start:\n%s\n", ext.Log().c_str());
    return 1;
  }
  while (neuron::testing::HttpGet(port, "/readyz").status != 200) {
    absl::SleepFor(absl::Milliseconds(20));
  }

  // Pending pods with mixed requests, created as users would; then give the watch a moment.
  std::vector<json> pods;
  const int sizes[] = {1, 2, 4, 8};
  for (int i = 0; i < pending; ++i) {
    const bool cores = i % 2 == 0;
    json pod = neuron::bench::SyntheticPendingPod(
        "ml", absl::StrCat("cycle-", i),
        cores ? "aws.amazon.com/neuroncore" : "aws.amazon.com/neuron", sizes[i % 4]);
    if (auto s = api.Put("/api/v1/namespaces/ml/pods/" + pod["metadata"]["name"].get<std::string>(),
                         pod);
        !s.ok()) {
      std::fprintf(stderr, "create pod: %s\n", std::string(s.message()).c_str());
      return 1;
    }
    pods.push_back(
        api.Get("/api/v1/namespaces/ml/pods/" + pod["metadata"]["name"].get<std::string>()));
  }
  absl::SleepFor(absl::Seconds(1));

  const Requests before = Requests::Of(api);
  const size_t gets_before = api.RequestCount("GET", "/pods/");
  const double cpu_before = CpuSeconds(ext.pid());
  const Cycles c = ScheduleAll(port, pods, cluster.node_names, window);
  absl::SleepFor(absl::Milliseconds(500));  // the watch events the binds caused
  const double cpu = CpuSeconds(ext.pid()) - cpu_before;
  const Requests after = Requests::Of(api);
  const double n = std::max(c.bound, 1);
  std::printf(
      "scheduling cycles, %d nodes + %d bound pods, %d names per filter: %d bound, "
      "%d unschedulable, %d errors, %.2f ms per cycle\n",
      nodes, bound_pods, window, c.bound, c.unschedulable, c.errors,
      1e3 * c.seconds / std::max(pending, 1));
  std::printf("  API requests per scheduled pod: %.2f (writes %.2f, pod GETs %.2f)\n",
              static_cast<double>(after.all - before.all) / n,
              static_cast<double>(after.writes - before.writes) / n,
              static_cast<double>(api.RequestCount("GET", "/pods/") - gets_before) / n);
  std::printf("  extender CPU per scheduled pod (filter + prioritize + bind + watch): %.3f ms\n",
              1e3 * cpu / n);
  ext.Terminate();
  api.Stop();
  std::filesystem::remove_all(dir);
  return c.errors == 0 ? 0 : 1;
}
