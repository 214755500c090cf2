#include "lib/topology/choose.h"

#include <algorithm>

#include "lib/topology/enumerate.h"
#include "lib/topology/graph.h"

namespace neuron::topology {

using internal::Bit;
using internal::Graph;
using internal::LowestIndex;
using internal::Mask;
using internal::PopCount;

namespace {

// True when the sorted id list of `a` is lexicographically smaller than that of `b` (both have
// the same number of ids): the lowest id in which they differ decides.
bool LowerIds(Mask a, Mask b) {
  const Mask x = a ^ b;
  return x != 0 && (a & (x & (~x + 1))) != 0;
}

Mask FreeMask(const Graph& g, const std::vector<bool>& free) {
  Mask m = 0;
  const int n = std::min<int>(g.n, static_cast<int>(free.size()));
  for (int i = 0; i < n; ++i) {
    if (free[i]) m |= Bit(i);
  }
  return m;
}

// Calls visit(mask) for every valid device set of k devices inside `allowed` containing `must`.
void ForEachValidDeviceSet(const Graph& g, Mask allowed, Mask must, int k,
                           const std::function<void(Mask)>& visit) {
  if ((must & ~allowed) != 0 || k > PopCount(allowed)) return;
  if (k == g.n) {
    if (allowed == g.all) visit(g.all);
    return;
  }
  switch (g.rule) {
    case internal::Rule::kAnySet:
      internal::ForEachSubset(allowed, must, k, visit);
      return;
    case internal::Rule::kConnected:
      internal::ForEachConnectedSet(g, allowed, k, [&](Mask s) {
        if ((s & must) == must) visit(s);
      });
      return;
    case internal::Rule::kTorusBlocks: {
      if (!internal::IsGroupSize(g, k)) return;
      const Mask block = k == 64 ? ~Mask{0} : Bit(k) - 1;
      for (int start = 0; start + k <= g.n; start += k) {
        const Mask b = block << start;
        if ((b & allowed) == b && (b & must) == must) visit(b);
      }
      return;
    }
  }
}

struct DeviceChoice {
  Mask set = 0;
  std::vector<int> profile;
};

std::optional<DeviceChoice> BestDevices(const Graph& g, Mask free_mask, int count,
                                        const std::vector<int>& must_include) {
  if (count < 1 || count > g.n || static_cast<int>(must_include.size()) > count) {
    return std::nullopt;
  }
  Mask must = 0;
  for (int d : must_include) {
    if (d < 0 || d >= g.n || (must & Bit(d)) != 0 || (free_mask & Bit(d)) == 0) {
      return std::nullopt;
    }
    must |= Bit(d);
  }
  std::optional<DeviceChoice> best;
  std::vector<int> profile;
  if (g.rule == internal::Rule::kAnySet) {
    // Every set leaves the same number of free devices: the lowest ids win.
    Mask s = must;
    for (Mask rest = free_mask & ~must; PopCount(s) < count && rest != 0; rest &= rest - 1) {
      s |= Bit(LowestIndex(rest));
    }
    if (PopCount(s) != count) return std::nullopt;
    internal::Profile(g, free_mask & ~s, &profile);
    return DeviceChoice{s, profile};
  }
  ForEachValidDeviceSet(g, free_mask, must, count, [&](Mask s) {
    internal::Profile(g, free_mask & ~s, &profile);
    if (!best || profile > best->profile || (profile == best->profile && LowerIds(s, best->set))) {
      best = DeviceChoice{s, profile};
    }
  });
  return best;
}

std::vector<int> ToIds(Mask m) {
  std::vector<int> ids;
  for (; m != 0; m &= m - 1) ids.push_back(LowestIndex(m));
  return ids;
}

// 1..10 from the state after the best placement (see choose.h). All quantities are counts.
int ScoreFrom(long largest_left, long free_left, long total) {
  if (free_left == 0) return 10;
  return 1 + static_cast<int>((9 * (largest_left * total + (total - free_left) * free_left)) /
                              (2 * free_left * total));
}

}  // namespace

std::optional<std::vector<int>> ChooseDevices(const NodeTopology& t, const std::vector<bool>& free,
                                              int count, const std::vector<int>& must_include) {
  Graph g;
  if (!BuildGraph(t, &g)) return std::nullopt;
  const std::optional<DeviceChoice> best = BestDevices(g, FreeMask(g, free), count, must_include);
  if (!best) return std::nullopt;
  return ToIds(best->set);
}

int ScoreDevices(const NodeTopology& t, const std::vector<bool>& free, int count) {
  Graph g;
  if (!BuildGraph(t, &g)) return 0;
  const Mask free_mask = FreeMask(g, free);
  const std::optional<DeviceChoice> best = BestDevices(g, free_mask, count, {});
  if (!best) return 0;
  const Mask left = free_mask & ~best->set;
  return ScoreFrom(internal::LargestBlock(g, left), PopCount(left), g.n);
}

}  // namespace neuron::topology
