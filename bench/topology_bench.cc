// Decisions per second of ChooseDevices / ChooseCores / ScoreDevices / ScoreCores on fragmented
// nodes. The free masks come from a fixed-seed simulation of a busy node: jobs of realistic sizes
// are placed with the library itself and random jobs are released, so the masks look like what
// the extender and the device plugin see after hours of churn.
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "lib/topology/topology.h"

namespace neuron::topology {
namespace {

struct Case {
  NodeTopology topology;
  std::vector<std::vector<bool>> device_masks;  // free devices
  std::vector<std::vector<bool>> core_masks;    // free cores
  std::vector<int> device_counts;
  std::vector<int> core_counts;
};

NodeTopology Topo(const char* type, int lnc) { return *TopologyForShape(*FindShape(type), lnc); }

// Simulates churn at core granularity and returns snapshots of 40-90% used nodes.
Case MakeCase(const char* type, int lnc, std::vector<int> device_counts) {
  Case c{Topo(type, lnc), {}, {}, std::move(device_counts), {}};
  const int cpd = c.topology.cores_per_device;
  const int total = c.topology.devices * cpd;
  c.core_counts = {1, 2, cpd, cpd + 1, 2 * cpd, 4 * cpd};
  std::mt19937 rng(2024);
  std::vector<bool> free(total, true);
  std::vector<std::vector<int>> jobs;
  while (c.core_masks.size() < 256) {
    const int used = total - static_cast<int>(std::count(free.begin(), free.end(), true));
    if (used * 10 < total * 9 && (used * 10 < total * 4 || rng() % 3 != 0)) {
      const int k = c.core_counts[rng() % c.core_counts.size()];
      if (auto cores = ChooseCores(c.topology, free, k)) {
        for (int x : *cores) free[x] = false;
        jobs.push_back(*cores);
      }
    } else if (!jobs.empty()) {
      const size_t j = rng() % jobs.size();
      for (int x : jobs[j]) free[x] = true;
      jobs.erase(jobs.begin() + static_cast<long>(j));
    }
    if (used * 10 >= total * 4) {
      c.core_masks.push_back(free);
      std::vector<bool> dev(c.topology.devices);
      for (int d = 0; d < c.topology.devices; ++d) {
        bool all = true;
        for (int x = d * cpd; x < (d + 1) * cpd; ++x) all = all && free[x];
        dev[d] = all;
      }
      c.device_masks.push_back(dev);
    }
  }
  return c;
}

const Case& Trn1() {
  static const Case c = MakeCase("trn1.32xlarge", 0, {1, 4, 8, 16});
  return c;
}
const Case& Inf2() {
  static const Case c = MakeCase("inf2.48xlarge", 0, {1, 2, 3, 4, 6, 12});
  return c;
}
const Case& Trn2Lnc2() {
  static const Case c = MakeCase("trn2.48xlarge", 2, {1, 4, 8, 16});
  return c;
}
const Case& Trn2Lnc1() {
  static const Case c = MakeCase("trn2.48xlarge", 1, {1, 4, 8, 16});
  return c;
}

template <const Case& (*Get)()>
void BM_ChooseDevices(benchmark::State& state) {
  const Case& c = Get();
  size_t i = 0;
  for (auto _ : state) {
    const auto& mask = c.device_masks[i % c.device_masks.size()];
    benchmark::DoNotOptimize(
        ChooseDevices(c.topology, mask, c.device_counts[i % c.device_counts.size()]));
    ++i;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

template <const Case& (*Get)()>
void BM_ScoreDevices(benchmark::State& state) {
  const Case& c = Get();
  size_t i = 0;
  for (auto _ : state) {
    const auto& mask = c.device_masks[i % c.device_masks.size()];
    benchmark::DoNotOptimize(
        ScoreDevices(c.topology, mask, c.device_counts[i % c.device_counts.size()]));
    ++i;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

template <const Case& (*Get)()>
void BM_ChooseCores(benchmark::State& state) {
  const Case& c = Get();
  size_t i = 0;
  for (auto _ : state) {
    const auto& mask = c.core_masks[i % c.core_masks.size()];
    benchmark::DoNotOptimize(
        ChooseCores(c.topology, mask, c.core_counts[i % c.core_counts.size()]));
    ++i;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

template <const Case& (*Get)()>
void BM_ScoreCores(benchmark::State& state) {
  const Case& c = Get();
  size_t i = 0;
  for (auto _ : state) {
    const auto& mask = c.core_masks[i % c.core_masks.size()];
    benchmark::DoNotOptimize(ScoreCores(c.topology, mask, c.core_counts[i % c.core_counts.size()]));
    ++i;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

// A whole-node request on an empty trn2 at LNC=1 (the largest enumeration the chooser does
// for a common request: 4*cpd = 32 cores -> 4 devices) and a 9-device core request on trn1
// (enumerates connected 9-sets of the torus).
void BM_ChooseCoresTrn1NineDevices(benchmark::State& state) {
  const NodeTopology t = Topo("trn1.32xlarge", 0);
  const std::vector<bool> free(32, true);
  for (auto _ : state) benchmark::DoNotOptimize(ChooseCores(t, free, 18));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

BENCHMARK_TEMPLATE(BM_ChooseDevices, Trn1)->Name("ChooseDevices/trn1.32xlarge");
BENCHMARK_TEMPLATE(BM_ChooseDevices, Inf2)->Name("ChooseDevices/inf2.48xlarge");
BENCHMARK_TEMPLATE(BM_ChooseDevices, Trn2Lnc2)->Name("ChooseDevices/trn2.48xlarge_lnc2");
BENCHMARK_TEMPLATE(BM_ChooseDevices, Trn2Lnc1)->Name("ChooseDevices/trn2.48xlarge_lnc1");
BENCHMARK_TEMPLATE(BM_ScoreDevices, Trn1)->Name("ScoreDevices/trn1.32xlarge");
BENCHMARK_TEMPLATE(BM_ScoreDevices, Inf2)->Name("ScoreDevices/inf2.48xlarge");
BENCHMARK_TEMPLATE(BM_ScoreDevices, Trn2Lnc2)->Name("ScoreDevices/trn2.48xlarge_lnc2");
BENCHMARK_TEMPLATE(BM_ChooseCores, Trn1)->Name("ChooseCores/trn1.32xlarge");
BENCHMARK_TEMPLATE(BM_ChooseCores, Inf2)->Name("ChooseCores/inf2.48xlarge");
BENCHMARK_TEMPLATE(BM_ChooseCores, Trn2Lnc2)->Name("ChooseCores/trn2.48xlarge_lnc2");
BENCHMARK_TEMPLATE(BM_ChooseCores, Trn2Lnc1)->Name("ChooseCores/trn2.48xlarge_lnc1");
BENCHMARK_TEMPLATE(BM_ScoreCores, Trn1)->Name("ScoreCores/trn1.32xlarge");
BENCHMARK_TEMPLATE(BM_ScoreCores, Inf2)->Name("ScoreCores/inf2.48xlarge");
BENCHMARK_TEMPLATE(BM_ScoreCores, Trn2Lnc2)->Name("ScoreCores/trn2.48xlarge_lnc2");
BENCHMARK_TEMPLATE(BM_ScoreCores, Trn2Lnc1)->Name("ScoreCores/trn2.48xlarge_lnc1");
BENCHMARK(BM_ChooseCoresTrn1NineDevices)->Name("ChooseCores/trn1.32xlarge_18cores_empty");

}  // namespace
}  // namespace neuron::topology

BENCHMARK_MAIN();
