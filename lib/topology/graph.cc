#include "lib/topology/graph.h"

#include <algorithm>

namespace neuron::topology::internal {
namespace {

int ExactSqrt(int n) {
  int w = 0;
  while ((w + 1) * (w + 1) <= n) ++w;
  return w * w == n ? w : 0;
}

}  // namespace

bool BuildGraph(const NodeTopology& t, Graph* g) {
  if (t.devices < 1 || t.devices > kMaxDevices) return false;
  if (static_cast<int>(t.links.size()) != t.devices) return false;
  g->n = t.devices;
  g->all = t.devices == 64 ? ~Mask{0} : Bit(t.devices) - 1;
  g->nbr.fill(0);
  for (int d = 0; d < t.devices; ++d) {
    for (int o : t.links[d]) {
      if (o < 0 || o >= t.devices || o == d) continue;
      g->nbr[d] |= Bit(o);
      g->nbr[o] |= Bit(d);
    }
  }
  g->group_sizes.clear();
  switch (t.link_kind) {
    case LinkKind::kNone:
    case LinkKind::kAllToAll:
      g->rule = Rule::kAnySet;
      break;
    case LinkKind::kRing:
    case LinkKind::kChain:
      g->rule = Rule::kConnected;
      break;
    case LinkKind::kTorus2D: {
      const int w = ExactSqrt(t.devices);
      if (w < 2) {  // not a W x W grid: fall back to the rule that fits any graph
        g->rule = Rule::kConnected;
        break;
      }
      g->rule = Rule::kTorusBlocks;
      g->group_sizes.push_back(1);
      for (int s = w; s < t.devices && t.devices % s == 0; s *= 2) g->group_sizes.push_back(s);
      if (g->group_sizes.back() != t.devices) g->group_sizes.push_back(t.devices);
      break;
    }
  }
  return true;
}

bool Connected(const Graph& g, Mask m) {
  if (m == 0) return false;
  Mask reached = Bit(LowestIndex(m));
  Mask frontier = reached;
  while (frontier != 0) {
    Mask next = 0;
    for (Mask f = frontier; f != 0; f &= f - 1) next |= g.nbr[LowestIndex(f)];
    next &= m & ~reached;
    reached |= next;
    frontier = next;
  }
  return reached == m;
}

bool IsGroupSize(const Graph& g, int size) {
  return std::find(g.group_sizes.begin(), g.group_sizes.end(), size) != g.group_sizes.end();
}

int SmallestGroupAtLeast(const Graph& g, int m) {
  for (int s : g.group_sizes) {
    if (s >= m) return s;
  }
  return g.n;
}

namespace {

Mask BlockMask(int start, int size) { return (size == 64 ? ~Mask{0} : Bit(size) - 1) << start; }

// Whether `s` lies inside one aligned block of `size` devices.
bool InsideOneBlock(Mask s, int size) {
  const int first = LowestIndex(s) / size * size;
  return (s & ~BlockMask(first, size)) == 0;
}

}  // namespace

bool ValidDeviceMask(const Graph& g, Mask s) {
  if (s == 0 || (s & ~g.all) != 0) return false;
  const int k = PopCount(s);
  if (k == 1 || s == g.all) return true;
  switch (g.rule) {
    case Rule::kAnySet:
      return true;
    case Rule::kConnected:
      return Connected(g, s);
    case Rule::kTorusBlocks:
      return IsGroupSize(g, k) && InsideOneBlock(s, k);
  }
  return false;
}

bool ValidCoreDeviceMask(const Graph& g, Mask d) {
  if (d == 0 || (d & ~g.all) != 0) return false;
  if (PopCount(d) == 1 || d == g.all) return true;
  switch (g.rule) {
    case Rule::kAnySet:
      return true;
    case Rule::kConnected:
      return Connected(g, d);
    case Rule::kTorusBlocks:
      return InsideOneBlock(d, SmallestGroupAtLeast(g, PopCount(d))) && Connected(g, d);
  }
  return false;
}

void Profile(const Graph& g, Mask free_mask, std::vector<int>* out) {
  out->clear();
  free_mask &= g.all;
  switch (g.rule) {
    case Rule::kAnySet:
      out->push_back(PopCount(free_mask));
      return;
    case Rule::kConnected: {
      Mask rest = free_mask;
      while (rest != 0) {
        Mask comp = Bit(LowestIndex(rest));
        Mask frontier = comp;
        while (frontier != 0) {
          Mask next = 0;
          for (Mask f = frontier; f != 0; f &= f - 1) next |= g.nbr[LowestIndex(f)];
          next &= rest & ~comp;
          comp |= next;
          frontier = next;
        }
        out->push_back(PopCount(comp));
        rest &= ~comp;
      }
      std::sort(out->begin(), out->end(), std::greater<int>());
      return;
    }
    case Rule::kTorusBlocks:
      for (auto it = g.group_sizes.rbegin(); it != g.group_sizes.rend(); ++it) {
        const int size = *it;
        int count = 0;
        for (int start = 0; start + size <= g.n; start += size) {
          const Mask b = BlockMask(start, size);
          if ((free_mask & b) == b) ++count;
        }
        out->push_back(count);
      }
      return;
  }
}

int LargestBlock(const Graph& g, Mask free_mask) {
  std::vector<int> p;
  Profile(g, free_mask, &p);
  switch (g.rule) {
    case Rule::kAnySet:
    case Rule::kConnected:
      return p.empty() ? 0 : p.front();
    case Rule::kTorusBlocks:
      for (size_t i = 0; i < p.size(); ++i) {
        if (p[i] > 0) return g.group_sizes[g.group_sizes.size() - 1 - i];
      }
      return 0;
  }
  return 0;
}

}  // namespace neuron::topology::internal
