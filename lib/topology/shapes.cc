#include "lib/topology/shapes.h"

namespace neuron::topology {
namespace {

using Links = std::vector<std::vector<int>>;

// Neighbour tables of the 16-device torus shapes, in the order the driver's connected_devices
// lists them (aws-neuron-driver @fca19f7: v2/neuron_dhal_v2.c trn1_32xl_neigbor_ids,
// v3/neuron_dhal_v3.c trn2_32xl_neigbor_ids). Both are the same 4 x 4 torus (rows 0-3 .. 12-15
// are rings, columns link d +- 4 mod 16); only the port order differs.
const Links kTrn1Torus = {{12, 3, 4, 1},  {13, 0, 5, 2},  {14, 1, 6, 3},   {15, 2, 7, 0},
                          {0, 7, 8, 5},   {1, 4, 9, 6},   {2, 5, 10, 7},   {3, 6, 11, 4},
                          {4, 11, 12, 9}, {5, 8, 13, 10}, {6, 9, 14, 11},  {7, 10, 15, 8},
                          {8, 15, 0, 13}, {9, 12, 1, 14}, {10, 13, 2, 15}, {11, 14, 3, 12}};
const Links kTrn2Torus = {{12, 1, 3, 4},  {0, 13, 5, 2},  {14, 3, 1, 6},   {2, 15, 7, 0},
                          {8, 5, 7, 0},   {4, 9, 1, 6},   {10, 7, 5, 2},   {6, 11, 3, 4},
                          {4, 9, 11, 12}, {8, 5, 13, 10}, {6, 11, 9, 14},  {10, 7, 15, 8},
                          {0, 13, 15, 8}, {12, 1, 9, 14}, {2, 15, 13, 10}, {14, 3, 11, 12}};

// inf2.48xlarge (v2/neuron_dhal_v2.c inf2_48xl_neighbor_ids): {previous, next}, wrapping.
// inf1 multi-device shapes: the driver reads the east and west neighbour from the chip
// (v1/neuron_dhal_v1.c); we assume the ring is in device-index order and list {next (east),
// previous (west)} -- the order is an assumption, the neighbour set is what the allocator uses.
Links Ring(int n, bool prev_first) {
  Links links(n);
  for (int d = 0; d < n; ++d) {
    const int prev = (d + n - 1) % n;
    const int next = (d + 1) % n;
    links[d] = prev_first ? std::vector<int>{prev, next} : std::vector<int>{next, prev};
  }
  return links;
}

// inf2.24xlarge (inf2_24xl_neighbor_ids): 0-1-2-3-4-5, no 5-0 link.
Links Chain(int n) {
  Links links(n);
  for (int d = 0; d < n; ++d) {
    if (d > 0) links[d].push_back(d - 1);
    if (d + 1 < n) links[d].push_back(d + 1);
  }
  return links;
}

Shape Single(const char* type, uint16_t id, Family f) {
  return Shape{type, id, f, 1, LinkKind::kNone, Links(1), 1};
}

// numa_nodes is only used by emulation; it follows the vCPU socket count of each size
// (1 up to ~96 vCPUs on one socket, 2 for the two-socket 24xl/32xl/48xl sizes). Assumption.
std::vector<Shape> BuildShapes() {
  std::vector<Shape> s;
  s.push_back(Single("inf1.xlarge", 0x7064, Family::kInferentia));
  s.push_back(Single("inf1.2xlarge", 0x7064, Family::kInferentia));
  s.push_back({"inf1.6xlarge", 0x7064, Family::kInferentia, 4, LinkKind::kRing, Ring(4, false), 1});
  s.push_back(
      {"inf1.24xlarge", 0x7064, Family::kInferentia, 16, LinkKind::kRing, Ring(16, false), 2});
  s.push_back(Single("inf2.xlarge", 0x7264, Family::kInferentia2));
  s.push_back(Single("inf2.8xlarge", 0x7264, Family::kInferentia2));
  s.push_back({"inf2.24xlarge", 0x7264, Family::kInferentia2, 6, LinkKind::kChain, Chain(6), 1});
  s.push_back(
      {"inf2.48xlarge", 0x7264, Family::kInferentia2, 12, LinkKind::kRing, Ring(12, true), 2});
  s.push_back(Single("trn1.2xlarge", 0x7164, Family::kTrainium));
  s.push_back({"trn1.32xlarge", 0x7164, Family::kTrainium, 16, LinkKind::kTorus2D, kTrn1Torus, 2});
  s.push_back({"trn1n.32xlarge", 0x7164, Family::kTrainium, 16, LinkKind::kTorus2D, kTrn1Torus, 2});
  s.push_back(Single("trn2.3xlarge", 0x7364, Family::kTrainium2));
  s.push_back({"trn2.48xlarge", 0x7364, Family::kTrainium2, 16, LinkKind::kTorus2D, kTrn2Torus, 2});
  s.push_back(
      {"trn2u.48xlarge", 0x7364, Family::kTrainium2, 16, LinkKind::kTorus2D, kTrn2Torus, 2});
  // Trainium3: no trn3 shape is listed. The newer driver names trn3.48xlarge / trn3p.48xlarge
  // but neither its device count nor a connected_devices table for it could be confirmed, so
  // trn3 nodes go through TopologyFromLinks (sysfs) instead of a guessed table.
  return s;
}

}  // namespace

const std::vector<Shape>& AllShapes() {
  static const std::vector<Shape>* const kShapes = new std::vector<Shape>(BuildShapes());
  return *kShapes;
}

const Shape* FindShape(std::string_view instance_type) {
  for (const Shape& s : AllShapes()) {
    if (s.instance_type == instance_type) return &s;
  }
  return nullptr;
}

}  // namespace neuron::topology
