// File: bench/extender_bench.cc
// CPU per extender call, in process, split into its stages (decode, decide, encode, and the
// whole Service handler without HTTP): where a request's time goes at 5,000 nodes + 20,000
// pods. The end-to-end figures over real HTTP are bench_extender_load's.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/cluster_gen.h"
#include "lib/base/process_init.h"
#include "lib/extender/cluster_view.h"
#include "lib/extender/decide.h"
#include "lib/extender/service.h"
#include "lib/extender/wire.h"
#include "nlohmann/json.hpp"
#include "prometheus/registry.h"

namespace {

using nlohmann::json;
namespace ext = neuron::extender;

struct Fixture {
  neuron::bench::SyntheticCluster cluster;
  ext::ClusterView view;
  std::vector<std::string> names_bodies;  // pod + 500 names, Go's field order
  std::string nodes_body;                 // pod + every Node (full-Nodes mode)

  Fixture() {
    cluster = neuron::bench::GenerateCluster({});
    for (const json& n : cluster.nodes) view.UpsertNode(n);
    for (const json& p : cluster.pods) view.UpsertPod(p);
    std::mt19937 rng(7);
    int i = 0;
    for (const char* res : {"aws.amazon.com/neuron", "aws.amazon.com/neuroncore"}) {
      for (int n : {1, 2, 4, 8, 16}) {
        const json pod = neuron::bench::SyntheticPendingPod("ml", absl::StrCat("p", i++), res, n);
        std::vector<std::string> pick;
        const size_t start = rng() % cluster.node_names.size();
        for (size_t k = 0; k < 500; ++k) {
          pick.push_back(cluster.node_names[(start + k) % cluster.node_names.size()]);
        }
        names_bodies.push_back(absl::StrCat(
            R"({"Pod":)", pod.dump(), R"(,"Nodes":null,"NodeNames":)", json(pick).dump(), "}"));
      }
    }
    json items = json::array();
    for (const json& n : cluster.nodes) items.push_back(n);
    nodes_body = json{
        {"Pod", neuron::bench::SyntheticPendingPod("ml", "full", "aws.amazon.com/neuron", 4)},
        {"Nodes", {{"metadata", json::object()}, {"items", items}}},
        {"NodeNames",
         nullptr}}.dump();
  }
};

Fixture& F() {
  static Fixture* f = new Fixture();
  return *f;
}

void BM_DecodeNamesArgs(benchmark::State& state) {
  F();  // built outside the timed loop
  size_t i = 0;
  for (auto _ : state) {
    auto args = ext::DecodeExtenderArgs(F().names_bodies[i++ % F().names_bodies.size()]);
    benchmark::DoNotOptimize(args);
  }
}
BENCHMARK(BM_DecodeNamesArgs)->Unit(benchmark::kMicrosecond);

void BM_FilterDecide(benchmark::State& state) {
  std::vector<ext::ExtenderArgs> args;
  for (const std::string& b : F().names_bodies) args.push_back(*ext::DecodeExtenderArgs(b));
  size_t i = 0;
  for (auto _ : state) {
    ext::FilterResult r = ext::Filter(F().view, args[i++ % args.size()], nullptr);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_FilterDecide)->Unit(benchmark::kMicrosecond);

void BM_FilterEncode(benchmark::State& state) {
  const ext::ExtenderArgs args = *ext::DecodeExtenderArgs(F().names_bodies[3]);
  const ext::FilterResult r = ext::Filter(F().view, args, nullptr);
  for (auto _ : state) benchmark::DoNotOptimize(ext::EncodeFilterResult(r));
}
BENCHMARK(BM_FilterEncode)->Unit(benchmark::kMicrosecond);

void BM_PrioritizeDecide(benchmark::State& state) {
  std::vector<ext::ExtenderArgs> args;
  for (const std::string& b : F().names_bodies) args.push_back(*ext::DecodeExtenderArgs(b));
  size_t i = 0;
  for (auto _ : state) {
    auto list = ext::Prioritize(F().view, args[i++ % args.size()], ext::Policy::kBinpack);
    benchmark::DoNotOptimize(list);
  }
}
BENCHMARK(BM_PrioritizeDecide)->Unit(benchmark::kMicrosecond);

// The /filter and /prioritize handlers whole (decode, decide, metrics, encode), minus HTTP.
void BM_ServiceFilterPrioritize(benchmark::State& state) {
  auto registry = std::make_shared<prometheus::Registry>();
  ext::Service service(F().view, nullptr, ext::Policy::kBinpack, registry);
  std::vector<neuron::httpserver::Request> reqs;
  for (const std::string& b : F().names_bodies) {
    neuron::httpserver::Request r;
    r.method = "POST";
    r.body = b;
    reqs.push_back(std::move(r));
  }
  size_t i = 0;
  for (auto _ : state) {
    const neuron::httpserver::Request& r = reqs[i++ % reqs.size()];
    benchmark::DoNotOptimize(service.Filter(r));
    benchmark::DoNotOptimize(service.Prioritize(r));
  }
}
BENCHMARK(BM_ServiceFilterPrioritize)->Unit(benchmark::kMicrosecond);

void BM_FullNodesFilter(benchmark::State& state) {
  auto registry = std::make_shared<prometheus::Registry>();
  ext::Service service(F().view, nullptr, ext::Policy::kBinpack, registry);
  neuron::httpserver::Request r;
  r.method = "POST";
  r.body = F().nodes_body;
  for (auto _ : state) benchmark::DoNotOptimize(service.Filter(r));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * r.body.size()));
}
BENCHMARK(BM_FullNodesFilter)->Unit(benchmark::kMillisecond);

void BM_FullNodesDecode(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(ext::DecodeExtenderArgs(F().nodes_body));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * F().nodes_body.size()));
}
BENCHMARK(BM_FullNodesDecode)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  neuron::InitProcess();  // as the extender binary runs
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
