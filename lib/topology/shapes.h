// EC2 instance shapes with Neuron devices and the device-to-device links of each.
#ifndef NEURON_LIB_TOPOLOGY_SHAPES_H_
#define NEURON_LIB_TOPOLOGY_SHAPES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lib/topology/device_model.h"

namespace neuron::topology {

// How the devices of a node are linked (NeuronLink).
//   kNone      no device-to-device links (single-device shapes).
//   kRing      a cycle through all devices (inf1 multi-device, inf2.48xlarge).
//   kChain     a path with two ends and no wrap (inf2.24xlarge: 0-1-2-3-4-5).
//   kTorus2D   a W x W torus, W = sqrt(devices): rows {0..W-1}, {W..2W-1}, ... are rings and
//              columns link d to d +- W (mod devices) (trn1/trn1n/trn2/trn2u: 4 x 4).
//   kAllToAll  every device linked to every other (switched fabric).
enum class LinkKind { kNone, kRing, kChain, kTorus2D, kAllToAll };

struct Shape {                // an EC2 instance type
  std::string instance_type;  // "trn1.32xlarge"
  uint16_t pci_device_id;     // id its chips report (e.g. 0x7164)
  Family family;
  int devices;
  LinkKind link_kind;
  std::vector<std::vector<int>> links;  // links[d] = indices connected to device d, as the
                                        // driver's connected_devices would list them
  int numa_nodes;  // devices split evenly across this many NUMA nodes (emulation)
};

// Every known shape, in a fixed order (inf1, inf2, trn1, trn1n, trn2, trn2u, trn3 if any).
const std::vector<Shape>& AllShapes();

// nullptr if unknown. Exact, case-sensitive match on instance_type.
const Shape* FindShape(std::string_view instance_type);

}  // namespace neuron::topology

#endif  // NEURON_LIB_TOPOLOGY_SHAPES_H_
