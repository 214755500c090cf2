// File: bench/gen_cluster_main.cc
// gen_cluster [--nodes N] [--pods M] [--seed S]: writes a synthetic cluster (bench/cluster_gen.h)
// as NDJSON on stdout, one Node or Pod per line, and a one-line summary on stderr.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "bench/cluster_gen.h"

int main(int argc, char** argv) {
  neuron::bench::ClusterSpec spec;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--nodes" && has_value) {
      spec.nodes = std::atoi(argv[++i]);
    } else if (a == "--pods" && has_value) {
      spec.pods = std::atoi(argv[++i]);
    } else if (a == "--seed" && has_value) {
      spec.seed = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr,
                   "usage: gen_cluster [--nodes N] [--pods M] [--seed S] > cluster.ndjson\n");
      return 2;
    }
  }
  if (spec.nodes <= 0 || spec.pods < 0) {
    std::fprintf(stderr, "gen_cluster: --nodes must be > 0 and --pods >= 0\n");
    return 2;
  }
  const neuron::bench::SyntheticCluster c = neuron::bench::GenerateCluster(spec);
  neuron::bench::WriteNdjson(c, std::cout);
  std::fprintf(stderr, "gen_cluster: %zu nodes, %zu pods (%d Neuron pods found no room)\n",
               c.nodes.size(), c.pods.size(), c.unplaced_pods);
  return 0;
}
