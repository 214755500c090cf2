#include "lib/topology/enumerate.h"

namespace neuron::topology::internal {
namespace {

struct Esu {
  const Graph& g;
  Mask allowed;
  int k;
  const std::function<void(Mask)>& visit;
  Mask above_v = 0;  // devices with an index above the current root
  int budget = kMaxCandidates;

  Mask Neighbours(Mask s) const {
    Mask out = 0;
    for (Mask r = s; r != 0; r &= r - 1) out |= g.nbr[LowestIndex(r)];
    return out;
  }

  // sub: current set; ext: extension candidates; closed: sub plus its neighbourhood.
  void Extend(Mask sub, Mask ext, Mask closed, int size) {
    if (budget <= 0) return;
    if (size == k) {
      --budget;
      visit(sub);
      return;
    }
    while (ext != 0 && budget > 0) {
      const int w = LowestIndex(ext);
      ext &= ext - 1;
      const Mask nw = g.nbr[w] & allowed & above_v & ~closed;
      Extend(sub | Bit(w), ext | nw, closed | nw | Bit(w), size + 1);
    }
  }
};

}  // namespace

bool ForEachConnectedSet(const Graph& g, Mask allowed, int k,
                         const std::function<void(Mask)>& visit) {
  allowed &= g.all;
  if (k < 1 || k > PopCount(allowed)) return true;
  Esu esu{g, allowed, k, visit};
  for (Mask roots = allowed; roots != 0 && esu.budget > 0; roots &= roots - 1) {
    const int v = LowestIndex(roots);
    esu.above_v = v == 63 ? 0 : ~(Bit(v + 1) - 1);
    const Mask ext = g.nbr[v] & allowed & esu.above_v;
    esu.Extend(Bit(v), ext, g.nbr[v] | Bit(v), 1);
  }
  return esu.budget > 0;
}

bool ForEachSubset(Mask allowed, Mask must, int k, const std::function<void(Mask)>& visit) {
  const Mask pool = allowed & ~must;
  const int extra = k - PopCount(must);
  if (extra < 0 || extra > PopCount(pool)) return true;
  // Positions of the pool's devices; walk combinations of `extra` of them in index order.
  int pos[64];
  int np = 0;
  for (Mask p = pool; p != 0; p &= p - 1) pos[np++] = LowestIndex(p);
  int idx[64];
  for (int i = 0; i < extra; ++i) idx[i] = i;
  int budget = kMaxCandidates;
  while (budget-- > 0) {
    Mask s = must;
    for (int i = 0; i < extra; ++i) s |= Bit(pos[idx[i]]);
    visit(s);
    int i = extra - 1;
    while (i >= 0 && idx[i] == np - extra + i) --i;
    if (i < 0) return true;
    ++idx[i];
    for (int j = i + 1; j < extra; ++j) idx[j] = idx[j - 1] + 1;
  }
  return false;
}

}  // namespace neuron::topology::internal
