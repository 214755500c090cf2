// File: bench/gen_dra_cluster_main.cc
// gen_dra_cluster: Nodes and the ResourceSlices our DRA driver publishes for them, as NDJSON on
// stdout, for bench/real-scheduler-dra.sh (issue 31). The slices come from the driver's own
// builder (lib/dra BuildResourceSlices), so the bench measures the layout we ship.
//
//   gen_dra_cluster --nodes N [--instance-type trn2.48xlarge] [--layout ours|minimal]
//                   [--partitionable] [--what nodes|slices|all]
//
// --layout minimal keeps the same devices but only the attributes a claim of the bench reads
// (resourceType for the DeviceClass, instanceType for AWS's template, devicegroup4_id for its
// constraint) and no capacity: what is left of a shape's cost is DRA's own.
// Nodes carry their status (allocatable aws.amazon.com/neuron and neuroncore, so the
// extended-resource shape runs on the same nodes) and the label neuron.aws.com/bench=dra.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <set>
#include <string>

#include "absl/strings/str_format.h"
#include "lib/dra/names.h"
#include "lib/dra/resource_slice.h"
#include "lib/dra/resource_slice_json.h"
#include "lib/topology/node_topology.h"
#include "lib/topology/shapes.h"
#include "nlohmann/json.hpp"

namespace {

using neuron::dra::ResourceSliceModel;

struct Options {
  int nodes = 0;
  std::string instance_type = "trn2.48xlarge";
  std::string layout = "ours";
  bool partitionable = false;
  std::string what = "all";
};

std::string NodeName(int i) { return absl::StrFormat("dra-bench-%05d", i); }

nlohmann::json NodeJson(const std::string& name, const neuron::topology::Shape& shape) {
  const auto topology = neuron::topology::TopologyForShape(shape);
  const int cores = shape.devices * (topology.ok() ? topology->cores_per_device : 1);
  nlohmann::json resources = {{"cpu", "192"},
                              {"memory", "2000Gi"},
                              {"pods", "110"},
                              {"aws.amazon.com/neuron", std::to_string(shape.devices)},
                              {"aws.amazon.com/neuroncore", std::to_string(cores)}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"labels",
             {{"kubernetes.io/hostname", name},
              {"node.kubernetes.io/instance-type", shape.instance_type},
              {"neuron.aws.com/bench", "dra"}}}}},
          {"status",
           {{"capacity", resources},
            {"allocatable", resources},
            {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
}

// Only what the bench's claims and DeviceClass read; no capacity.
void Minimize(ResourceSliceModel& slice) {
  const std::set<std::string> keep = {"resourceType", "instanceType",
                                      neuron::dra::DeviceGroupAttribute(4)};
  for (auto& device : slice.devices) {
    std::erase_if(device.attributes, [&](const auto& kv) { return !keep.contains(kv.first); });
    device.capacity.clear();
  }
}

int Usage() {
  std::fprintf(stderr,
               "usage: gen_dra_cluster --nodes N [--instance-type T] [--layout ours|minimal]\n"
               "                       [--partitionable] [--what nodes|slices|all] > out.ndjson\n");
  return 2;
}

bool ParseArgs(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--nodes" && has_value) {
      o.nodes = std::atoi(argv[++i]);
    } else if (a == "--instance-type" && has_value) {
      o.instance_type = argv[++i];
    } else if (a == "--layout" && has_value) {
      o.layout = argv[++i];
    } else if (a == "--what" && has_value) {
      o.what = argv[++i];
    } else if (a == "--partitionable") {
      o.partitionable = true;
    } else {
      return false;
    }
  }
  return o.nodes > 0 && (o.layout == "ours" || o.layout == "minimal") &&
         (o.what == "nodes" || o.what == "slices" || o.what == "all");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, o)) return Usage();
  const neuron::topology::Shape* shape = neuron::topology::FindShape(o.instance_type);
  if (shape == nullptr) {
    std::fprintf(stderr, "gen_dra_cluster: unknown instance type %s\n", o.instance_type.c_str());
    return 2;
  }
  size_t slices = 0;
  for (int i = 0; i < o.nodes; ++i) {
    const std::string name = NodeName(i);
    if (o.what != "slices") std::cout << NodeJson(name, *shape).dump() << "\n";
    if (o.what == "nodes") continue;
    neuron::dra::NodeDeviceInfo node;
    node.node_name = name;
    node.shape = shape;
    node.neuron_driver_version = "2.24.7.0";
    node.dra_driver_version = "bench";
    auto built = neuron::dra::BuildResourceSlices(node, {.partitionable = o.partitionable});
    if (!built.ok()) {
      std::fprintf(stderr, "gen_dra_cluster: %s\n", built.status().ToString().c_str());
      return 1;
    }
    for (ResourceSliceModel& slice : *built) {
      if (o.layout == "minimal") Minimize(slice);
      std::cout << neuron::dra::ResourceSliceJsonText(slice, neuron::dra::ResourceApi::kV1) << "\n";
      ++slices;
    }
  }
  std::fprintf(stderr, "gen_dra_cluster: %d %s nodes, %zu ResourceSlices (%s layout)\n", o.nodes,
               o.instance_type.c_str(), slices, o.layout.c_str());
  return 0;
}
