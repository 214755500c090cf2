// ChooseCores / ScoreCores: core-level best fit on top of the device rules (see choose.h).
#include <algorithm>
#include <array>

#include "lib/topology/choose.h"
#include "lib/topology/enumerate.h"
#include "lib/topology/graph.h"

namespace neuron::topology {

using internal::Bit;
using internal::Graph;
using internal::LowestIndex;
using internal::Mask;
using internal::PopCount;

namespace {

struct CoreState {
  int cpd = 0;
  int total = 0;
  std::vector<std::vector<int>> free_on;  // free core ids per device, ascending
  Mask usable = 0;                        // devices with at least one free core
  Mask wholly_free = 0;                   // devices whose every core is free
  int free_cores = 0;
};

CoreState ReadCores(const Graph& g, int cpd, const std::vector<bool>& free_cores) {
  CoreState s;
  s.cpd = cpd;
  s.total = g.n * cpd;
  s.free_on.resize(g.n);
  const int limit = std::min<int>(s.total, static_cast<int>(free_cores.size()));
  for (int c = 0; c < limit; ++c) {
    if (free_cores[c]) s.free_on[c / cpd].push_back(c);
  }
  for (int d = 0; d < g.n; ++d) {
    const int f = static_cast<int>(s.free_on[d].size());
    s.free_cores += f;
    if (f > 0) s.usable |= Bit(d);
    if (f == cpd) s.wholly_free |= Bit(d);
  }
  return s;
}

// The cores taken from device set `d` into `out`: must cores first (`must` sorted), then the
// devices with the fewest remaining free cores are filled first (ties: lower id), lowest core
// ids first.
void CoresOn(const CoreState& s, Mask d, int count, const std::vector<int>& must,
             std::vector<int>* out) {
  out->assign(must.begin(), must.end());
  std::array<std::pair<int, int>, kMaxDevices> order;  // (remaining free, device)
  int n = 0;
  for (Mask r = d; r != 0; r &= r - 1) {
    const int dev = LowestIndex(r);
    int remaining = static_cast<int>(s.free_on[dev].size());
    for (int c : must) remaining -= (c / s.cpd == dev) ? 1 : 0;
    order[n++] = {remaining, dev};
  }
  std::sort(order.begin(), order.begin() + n);
  int need = count - static_cast<int>(must.size());
  for (int i = 0; i < n && need > 0; ++i) {
    for (int c : s.free_on[order[i].second]) {
      if (need == 0) break;
      if (!must.empty() && std::binary_search(must.begin(), must.end(), c)) continue;
      out->push_back(c);
      --need;
    }
  }
  std::sort(out->begin(), out->end());
}

struct CoreChoice {
  Mask devices = 0;
  std::vector<int> profile;
  int leftover = 0;
  std::vector<int> cores;  // filled lazily: only ties need it before the end
  bool cores_known = false;
};

std::optional<CoreChoice> BestCores(const Graph& g, const CoreState& s, int count,
                                    const std::vector<int>& must_include) {
  if (s.cpd < 1 || count < 1 || count > s.total || static_cast<int>(must_include.size()) > count) {
    return std::nullopt;
  }
  std::vector<bool> taken(s.total, false);
  Mask must_dev = 0;
  for (int c : must_include) {
    if (c < 0 || c >= s.total || taken[c]) return std::nullopt;
    const auto& f = s.free_on[c / s.cpd];
    if (!std::binary_search(f.begin(), f.end(), c)) return std::nullopt;
    taken[c] = true;
    must_dev |= Bit(c / s.cpd);
  }
  std::vector<int> must = must_include;
  std::sort(must.begin(), must.end());
  const int m = (count + s.cpd - 1) / s.cpd;
  if (PopCount(must_dev) > m) return std::nullopt;

  std::optional<CoreChoice> best;
  std::vector<int> profile;
  std::vector<int> scratch;
  auto consider = [&](Mask d) {
    if ((d & must_dev) != must_dev) return;
    int sum = 0;
    for (Mask r = d; r != 0; r &= r - 1) sum += static_cast<int>(s.free_on[LowestIndex(r)].size());
    if (sum < count) return;
    internal::Profile(g, s.wholly_free & ~d, &profile);
    const int leftover = sum - count;
    if (best) {
      if (profile < best->profile) return;
      if (profile == best->profile) {
        if (leftover > best->leftover) return;
        if (leftover == best->leftover) {
          if (!best->cores_known) {
            CoresOn(s, best->devices, count, must, &best->cores);
            best->cores_known = true;
          }
          CoresOn(s, d, count, must, &scratch);
          if (!(scratch < best->cores)) return;
          best->devices = d;
          best->cores.swap(scratch);
          return;
        }
      }
    } else {
      best.emplace();
    }
    best->devices = d;
    best->profile.swap(profile);
    best->leftover = leftover;
    best->cores_known = false;
  };

  if (count == s.total || m == g.n) {  // every device, even on a disconnected graph
    if (s.usable == g.all) consider(g.all);
  } else {
    switch (g.rule) {
      case internal::Rule::kAnySet:
        internal::ForEachSubset(s.usable, must_dev & s.usable, m, consider);
        break;
      case internal::Rule::kConnected:
        internal::ForEachConnectedSet(g, s.usable, m, consider);
        break;
      case internal::Rule::kTorusBlocks: {
        const int size = internal::SmallestGroupAtLeast(g, m);
        const Mask block = size == 64 ? ~Mask{0} : Bit(size) - 1;
        for (int start = 0; start + size <= g.n; start += size) {
          const Mask allowed = s.usable & (block << start);
          if ((must_dev & ~allowed) != 0) continue;
          if (m == size) {
            if (allowed == (block << start)) consider(allowed);
          } else {
            internal::ForEachConnectedSet(g, allowed, m, consider);
          }
        }
        break;
      }
    }
  }
  if (best && !best->cores_known) {
    CoresOn(s, best->devices, count, must, &best->cores);
    best->cores_known = true;
  }
  return best;
}

}  // namespace

std::optional<std::vector<int>> ChooseCores(const NodeTopology& t,
                                            const std::vector<bool>& free_cores, int count,
                                            const std::vector<int>& must_include) {
  Graph g;
  if (!BuildGraph(t, &g) || t.cores_per_device < 1) return std::nullopt;
  const CoreState s = ReadCores(g, t.cores_per_device, free_cores);
  std::optional<CoreChoice> best = BestCores(g, s, count, must_include);
  if (!best) return std::nullopt;
  return std::move(best->cores);
}

int ScoreCores(const NodeTopology& t, const std::vector<bool>& free_cores, int count) {
  Graph g;
  if (!BuildGraph(t, &g) || t.cores_per_device < 1) return 0;
  const CoreState s = ReadCores(g, t.cores_per_device, free_cores);
  const std::optional<CoreChoice> best = BestCores(g, s, count, {});
  if (!best) return 0;
  const long free_left = s.free_cores - count;
  const long largest =
      static_cast<long>(internal::LargestBlock(g, s.wholly_free & ~best->devices)) * s.cpd;
  if (free_left == 0) return 10;
  const long total = s.total;
  return 1 + static_cast<int>((9 * (largest * total + (total - free_left) * free_left)) /
                              (2 * free_left * total));
}

}  // namespace neuron::topology
