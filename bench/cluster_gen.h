// File: bench/cluster_gen.h
// A synthetic Neuron cluster for load drivers: Node and Pod objects shaped as kube-apiserver
// returns them (labels, conditions, images, managedFields, so list and watch carry realistic
// bytes), on a mix of instance types. Bound pods hold valid, disjoint IDs chosen with
// lib/topology (as the device plugin would), with the extender/plugin handshake annotations;
// a few hold Neuron resources without annotations, and some ask for no Neuron resource at all.
// Deterministic for a given seed.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace neuron::bench {

struct ClusterSpec {
  int nodes = 5000;
  int pods = 20000;
  uint64_t seed = 1;
  double cpu_only_fraction = 0.10;     // pods asking for no Neuron resource
  double device_pod_fraction = 0.25;   // of the Neuron pods: aws.amazon.com/neuron
  double unannotated_fraction = 0.02;  // of the Neuron pods: no AWS_NEURON_IDS yet
};

struct SyntheticCluster {
  std::vector<nlohmann::json> nodes;
  std::vector<nlohmann::json> pods;
  std::vector<std::string> node_names;   // in creation order
  std::vector<std::string> node_shapes;  // instance type of node_names[i]
  int unplaced_pods = 0;                 // Neuron pods that found no room (cluster full)
};

SyntheticCluster GenerateCluster(const ClusterSpec& spec);

// A Node of `instance_type` at the family's default LNC, allocatable = capacity.
nlohmann::json SyntheticNode(const std::string& name, const std::string& instance_type);

// A pending pod (no nodeName) asking for `count` of `resource` ("aws.amazon.com/neuron" or
// "aws.amazon.com/neuroncore"), as kube-scheduler would put it in ExtenderArgs.Pod.
nlohmann::json SyntheticPendingPod(const std::string& ns, const std::string& name,
                                   const std::string& resource, int count);

// One object per line (nodes first), for `fake-apiserver --preload`.
void WriteNdjson(const SyntheticCluster& cluster, std::ostream& out);

}  // namespace neuron::bench
