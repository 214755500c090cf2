// Umbrella header of lib/topology: the one hardware and allocation model of the suite.
// Pure: no I/O, no dependency beyond Abseil.
#ifndef NEURON_LIB_TOPOLOGY_TOPOLOGY_H_
#define NEURON_LIB_TOPOLOGY_TOPOLOGY_H_

#include "lib/topology/choose.h"         // IWYU pragma: export
#include "lib/topology/device_model.h"   // IWYU pragma: export
#include "lib/topology/node_topology.h"  // IWYU pragma: export
#include "lib/topology/shapes.h"         // IWYU pragma: export
#include "lib/topology/valid_sets.h"     // IWYU pragma: export

#endif  // NEURON_LIB_TOPOLOGY_TOPOLOGY_H_
