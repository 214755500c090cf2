#include "lib/topology/valid_sets.h"

#include "lib/topology/graph.h"

namespace neuron::topology {

using internal::Bit;
using internal::Graph;
using internal::Mask;

bool IsValidDeviceSet(const NodeTopology& t, const std::vector<int>& devices) {
  Graph g;
  if (!BuildGraph(t, &g) || devices.empty()) return false;
  Mask s = 0;
  for (int d : devices) {
    if (d < 0 || d >= g.n || (s & Bit(d)) != 0) return false;
    s |= Bit(d);
  }
  return ValidDeviceMask(g, s);
}

bool IsValidCoreSet(const NodeTopology& t, const std::vector<int>& cores) {
  Graph g;
  if (!BuildGraph(t, &g) || cores.empty() || t.cores_per_device < 1) return false;
  const int cpd = t.cores_per_device;
  const int total = g.n * cpd;
  std::vector<bool> seen(total, false);
  Mask d = 0;
  for (int c : cores) {
    if (c < 0 || c >= total || seen[c]) return false;
    seen[c] = true;
    d |= Bit(c / cpd);
  }
  const int k = static_cast<int>(cores.size());
  if (k == total) return true;
  const int m = (k + cpd - 1) / cpd;
  if (internal::PopCount(d) != m) return false;
  return ValidCoreDeviceMask(g, d);
}

}  // namespace neuron::topology
