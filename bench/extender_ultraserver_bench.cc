// File: bench/extender_ultraserver_bench.cc
// The extender's /filter and /prioritize handlers (decode, decide, encode; no HTTP) for pods of
// UltraServer groups, at 5,000 trn2u.48xlarge nodes forming 1,250 UltraServers, with groups
// placed: 300 UltraServers run a 4-node group, 300 two 2-node groups, 100 a 2-node group and
// two 1-node groups, 50 have a 4-node group in flight (first pod bound, set reserved), 500
// are free. Candidates: all 5,000 nodes, and the 500 that kube-scheduler's adaptive
// percentageOfNodesToScore sends at this size. Prints p50 / p99 / max per scenario.
//   bench_extender_ultraserver [iterations=2000]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/cluster_gen.h"
#include "lib/base/process_init.h"
#include "lib/extender/cluster_view.h"
#include "lib/extender/decide.h"
#include "lib/extender/service.h"
#include "lib/ultraserver/emulation.h"
#include "lib/ultraserver/labels.h"
#include "nlohmann/json.hpp"
#include "prometheus/registry.h"

namespace {

using nlohmann::json;
namespace ext = neuron::extender;
namespace us = neuron::ultraserver;

constexpr int kUltraServers = 1250;

std::string NodeName(int i) { return absl::StrCat("trn2u-", i); }

// What the labels of node `node` (0..3) of UltraServer `u` say, from the emulated driver.
json UsLabels(int u, int node) {
  const auto attrs =
      us::EmulatedClassAttributes(*us::ParseEmulatedNode(absl::StrCat("us", u, ":", node)));
  us::Identity id;
  id.modes = *us::ParseModes(attrs.at(us::kModesFile));
  id.server_id_4 = *us::ParseServerId(attrs.at(us::ServerIdFile(4)));
  id.server_id_2 = *us::ParseServerId(attrs.at(us::ServerIdFile(2)));
  id.node_id_4 = *us::ParseNodeId(attrs.at(us::NodeIdFile(4)));
  id.node_id_2 = *us::ParseNodeId(attrs.at(us::NodeIdFile(2)));
  json labels = json::object();
  for (const auto& [k, v] : us::IdentityLabels(id)) labels[k] = v;
  return labels;
}

json GroupPod(const std::string& name, const std::string& group, int n, int node = -1) {
  json pod = neuron::bench::SyntheticPendingPod("ml", name, "aws.amazon.com/neuron", 16);
  pod["metadata"]["labels"] = {{"neuron.aws.com/pod-group", group},
                               {"neuron.aws.com/ultraserver-nodes", std::to_string(n)}};
  if (node >= 0) {
    pod["spec"]["nodeName"] = NodeName(node);
    pod["status"]["phase"] = "Running";
    pod["metadata"]["annotations"] = {{"AWS_NEURON_IDS", "0-15"},
                                      {"NEURON_RESOURCE_TYPE", "neuron"},
                                      {"NEURON_ALLOCATED", "true"}};
  }
  return pod;
}

// Group `group` of size n bound on nodes first..first+n-1.
void Bind(ext::ClusterView& view, const std::string& group, int n, int first) {
  for (int k = 0; k < n; ++k) {
    view.UpsertPod(GroupPod(absl::StrCat(group, "-", k), group, n, first + k));
  }
}

void Populate(ext::ClusterView& view) {
  for (int u = 0; u < kUltraServers; ++u) {
    for (int k = 0; k < 4; ++k) {
      json node = neuron::bench::SyntheticNode(NodeName(4 * u + k), "trn2u.48xlarge");
      const json labels = UsLabels(u, k);
      for (const auto& [key, v] : labels.items()) node["metadata"]["labels"][key] = v;
      view.UpsertNode(node);
    }
  }
  for (int u = 0; u < 300; ++u) Bind(view, absl::StrCat("four", u), 4, 4 * u);
  for (int u = 300; u < 600; ++u) {
    Bind(view, absl::StrCat("pa", u), 2, 4 * u);
    Bind(view, absl::StrCat("pb", u), 2, 4 * u + 2);
  }
  for (int u = 600; u < 700; ++u) {
    Bind(view, absl::StrCat("pc", u), 2, 4 * u);
    Bind(view, absl::StrCat("sa", u), 1, 4 * u + 2);
    Bind(view, absl::StrCat("sb", u), 1, 4 * u + 3);
  }
  for (int u = 700; u < 750; ++u) {  // in flight: the first pod bound, the set reserved
    const std::string group = absl::StrCat("fly", u);
    auto first = ext::ParsePod(GroupPod(group + "-0", group, 4));
    if (!first.ok() || !view.PlaceGroupPod(*first, NodeName(4 * u), absl::Hours(1)).ok()) {
      std::fprintf(stderr, "could not place %s\n", group.c_str());
      std::exit(1);
    }
    view.UpsertPod(GroupPod(group + "-0", group, 4, 4 * u));
  }
}

// `candidates` names from node `first` on (wrapping): all 5,000, or the 500 kube-scheduler
// found feasible first (from nodes of UltraServers 700..824: in-flight groups, then free ones).
std::string Body(const json& pod, int candidates) {
  const int first = candidates >= 4 * kUltraServers ? 0 : 4 * 700;
  std::vector<std::string> names;
  for (int i = 0; i < candidates; ++i) names.push_back(NodeName((first + i) % (4 * kUltraServers)));
  return json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", names}}.dump();
}

struct Figures {
  double p50, p99, cpu_p50, cpu_p99;
};

double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Times `iterations` calls: wall time (preemption by other work on a shared machine included)
// and this thread's CPU time (what the call costs).
template <typename Fn>
Figures Time(int iterations, Fn&& call) {
  std::vector<double> wall, cpu;
  wall.reserve(iterations);
  cpu.reserve(iterations);
  for (int i = 0; i < iterations; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = ThreadCpuMs();
    call();
    cpu.push_back(ThreadCpuMs() - c0);
    wall.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  const size_t p50 = wall.size() / 2, p99 = wall.size() * 99 / 100;
  return {wall[p50], wall[p99], cpu[p50], cpu[p99]};
}

void Scenario(ext::Service& service, const char* what, const json& pod, int candidates,
              int iterations) {
  neuron::httpserver::Request req;
  req.method = "POST";
  req.body = Body(pod, candidates);
  const auto answer = json::parse(service.Filter(req).body);
  const size_t passed = answer["NodeNames"].size();
  // kube-scheduler prioritizes only the nodes that passed the filter.
  neuron::httpserver::Request prio = req;
  prio.body = json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", answer["NodeNames"]}}.dump();
  const Figures f = Time(iterations, [&] { (void)service.Filter(req); });
  const Figures p = Time(iterations, [&] { (void)service.Prioritize(prio); });
  std::printf("| %s | %d | %zu | %.3f | %.3f | %.3f | %.3f | %.3f / %.3f |\n", what, candidates,
              passed, f.cpu_p50, f.cpu_p99, f.p50, f.p99, p.cpu_p50, p.cpu_p99);
}

}  // namespace

int main(int argc, char** argv) {
  neuron::InitProcess();
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 2000;
  ext::ClusterView view;
  Populate(view);
  auto registry = std::make_shared<prometheus::Registry>();
  ext::Service service(view, nullptr, ext::Policy::kBinpack, registry);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::printf("nodes=%zu pods=%zu group reservations=%zu iterations=%d\n\n", view.node_count(),
              view.pod_count(), view.group_reservation_count(), iterations);
  std::printf(
      "| pod | candidates | passed | filter CPU p50 ms | filter CPU p99 ms | filter wall p50 ms | "
      "filter wall p99 ms | prioritize (passed nodes) CPU p50 / p99 ms |\n"
      "|---|---|---|---|---|---|---|---|\n");
  for (int candidates : {5000, 500}) {
    Scenario(service, "first pod of a new 4-node group", GroupPod("new4-0", "new4", 4), candidates,
             iterations);
    Scenario(service, "first pod of a new 2-node group", GroupPod("new2-0", "new2", 2), candidates,
             iterations);
    Scenario(service, "1-node group", GroupPod("new1-0", "new1", 1), candidates, iterations);
    Scenario(service, "later pod of an in-flight 4-node group", GroupPod("fly700-1", "fly700", 4),
             candidates, iterations);
    Scenario(service, "plain pod (16 devices, no group)",
             neuron::bench::SyntheticPendingPod("ml", "plain", "aws.amazon.com/neuron", 16),
             candidates, iterations);
  }
  return 0;
}
