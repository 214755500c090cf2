// Brute-force reference model of the rules documented in lib/topology/valid_sets.h and choose.h,
// written independently of the library (plain vectors, whole-subset enumeration). Tests only.
#ifndef NEURON_TESTS_TOPOLOGY_REFERENCE_H_
#define NEURON_TESTS_TOPOLOGY_REFERENCE_H_

#include <algorithm>
#include <optional>
#include <set>
#include <vector>

#include "lib/topology/topology.h"

namespace neuron::topology::reference {

inline std::vector<std::set<int>> Neighbours(const NodeTopology& t) {
  std::vector<std::set<int>> nb(t.devices);
  for (int d = 0; d < t.devices; ++d) {
    for (int o : t.links[d]) {
      if (o >= 0 && o < t.devices && o != d) {
        nb[d].insert(o);
        nb[o].insert(d);
      }
    }
  }
  return nb;
}

inline bool IsConnected(const NodeTopology& t, const std::vector<int>& set) {
  if (set.empty()) return false;
  const auto nb = Neighbours(t);
  std::set<int> in(set.begin(), set.end()), seen = {set[0]};
  std::vector<int> todo = {set[0]};
  while (!todo.empty()) {
    const int d = todo.back();
    todo.pop_back();
    for (int o : nb[d]) {
      if (in.count(o) && !seen.count(o)) {
        seen.insert(o);
        todo.push_back(o);
      }
    }
  }
  return seen.size() == in.size();
}

inline int TorusWidth(int n) {
  for (int w = 2; w * w <= n; ++w) {
    if (w * w == n) return w;
  }
  return 0;
}

inline bool IsTorus(const NodeTopology& t) {
  return t.link_kind == LinkKind::kTorus2D && TorusWidth(t.devices) >= 2;
}

// Aligned group sizes of a W x W torus: 1, W, 2W, 4W, ... (dividing n), n.
inline std::vector<int> GroupSizes(int n) {
  const int w = TorusWidth(n);
  std::vector<int> sizes = {1};
  for (int s = w; s < n; s *= 2) {
    if (n % s != 0) break;
    sizes.push_back(s);
  }
  sizes.push_back(n);
  return sizes;
}

inline bool InOneAlignedBlock(const std::vector<int>& set, int size) {
  const int block = set.front() / size;
  for (int d : set) {
    if (d / size != block) return false;
  }
  return true;
}

// `set` sorted, unique, in range.
inline bool ValidDevices(const NodeTopology& t, const std::vector<int>& set) {
  const int k = static_cast<int>(set.size());
  if (k == 0) return false;
  if (k == 1 || k == t.devices) return true;
  if (t.link_kind == LinkKind::kNone || t.link_kind == LinkKind::kAllToAll) return true;
  if (IsTorus(t)) {
    const auto sizes = GroupSizes(t.devices);
    if (std::find(sizes.begin(), sizes.end(), k) == sizes.end()) return false;
    return set.front() % k == 0 && set.back() == set.front() + k - 1;
  }
  return IsConnected(t, set);
}

// Device part of the core rule: `devs` sorted, of the minimal size for the request.
inline bool ValidCoreDevices(const NodeTopology& t, const std::vector<int>& devs) {
  const int m = static_cast<int>(devs.size());
  if (m == 1 || m == t.devices) return true;
  if (t.link_kind == LinkKind::kNone || t.link_kind == LinkKind::kAllToAll) return true;
  if (IsTorus(t)) {
    int g = t.devices;
    for (int s : GroupSizes(t.devices)) {
      if (s >= m) {
        g = s;
        break;
      }
    }
    return InOneAlignedBlock(devs, g) && IsConnected(t, devs);
  }
  return IsConnected(t, devs);
}

inline bool ValidCores(const NodeTopology& t, std::vector<int> cores) {
  std::sort(cores.begin(), cores.end());
  const int total = t.devices * t.cores_per_device;
  if (cores.empty() || cores.front() < 0 || cores.back() >= total) return false;
  if (std::adjacent_find(cores.begin(), cores.end()) != cores.end()) return false;
  const int k = static_cast<int>(cores.size());
  if (k == total) return true;
  std::set<int> devs;
  for (int c : cores) devs.insert(c / t.cores_per_device);
  const int m = (k + t.cores_per_device - 1) / t.cores_per_device;
  if (static_cast<int>(devs.size()) != m) return false;
  return ValidCoreDevices(t, std::vector<int>(devs.begin(), devs.end()));
}

inline std::vector<int> Members(unsigned mask, int n) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) {
    if (mask & (1u << i)) v.push_back(i);
  }
  return v;
}

// Every valid device set of the node, by brute force over all 2^n subsets (n <= 20).
inline std::vector<std::vector<int>> AllValidDeviceSets(const NodeTopology& t) {
  std::vector<std::vector<int>> out;
  for (unsigned m = 1; m < (1u << t.devices); ++m) {
    auto s = Members(m, t.devices);
    if (ValidDevices(t, s)) out.push_back(s);
  }
  return out;
}

// Every device set (any size) usable by a core request that needs exactly |set| devices.
inline std::vector<std::vector<int>> AllCoreDeviceSets(const NodeTopology& t) {
  std::vector<std::vector<int>> out;
  for (unsigned m = 1; m < (1u << t.devices); ++m) {
    auto s = Members(m, t.devices);
    if (ValidCoreDevices(t, s)) out.push_back(s);
  }
  return out;
}

// Free-block profile (choose.h), independent implementation.
inline std::vector<int> Profile(const NodeTopology& t, const std::vector<bool>& free) {
  std::vector<int> p;
  if (t.link_kind == LinkKind::kNone || t.link_kind == LinkKind::kAllToAll) {
    p.push_back(static_cast<int>(std::count(free.begin(), free.end(), true)));
    return p;
  }
  if (IsTorus(t)) {
    auto sizes = GroupSizes(t.devices);
    for (auto it = sizes.rbegin(); it != sizes.rend(); ++it) {
      int count = 0;
      for (int start = 0; start < t.devices; start += *it) {
        bool all = true;
        for (int d = start; d < start + *it; ++d) all = all && free[d];
        count += all ? 1 : 0;
      }
      p.push_back(count);
    }
    return p;
  }
  const auto nb = Neighbours(t);
  std::vector<bool> seen(t.devices, false);
  for (int d = 0; d < t.devices; ++d) {
    if (!free[d] || seen[d]) continue;
    int size = 0;
    std::vector<int> todo = {d};
    seen[d] = true;
    while (!todo.empty()) {
      const int x = todo.back();
      todo.pop_back();
      ++size;
      for (int o : nb[x]) {
        if (free[o] && !seen[o]) {
          seen[o] = true;
          todo.push_back(o);
        }
      }
    }
    p.push_back(size);
  }
  std::sort(p.rbegin(), p.rend());
  return p;
}

inline bool Contains(const std::vector<int>& set, const std::vector<int>& must) {
  for (int x : must) {
    if (std::find(set.begin(), set.end(), x) == set.end()) return false;
  }
  return true;
}

// Best device set per choose.h, by scanning every valid set.
inline std::optional<std::vector<int>> BestDevices(const NodeTopology& t,
                                                   const std::vector<std::vector<int>>& valid,
                                                   const std::vector<bool>& free, int count,
                                                   const std::vector<int>& must) {
  std::optional<std::vector<int>> best;
  std::vector<int> best_profile;
  for (const auto& s : valid) {
    if (static_cast<int>(s.size()) != count || !Contains(s, must)) continue;
    bool all_free = true;
    for (int d : s) all_free = all_free && free[d];
    if (!all_free) continue;
    std::vector<bool> left = free;
    for (int d : s) left[d] = false;
    auto p = Profile(t, left);
    if (!best || p > best_profile || (p == best_profile && s < *best)) {
      best = s;
      best_profile = p;
    }
  }
  return best;
}

// Cores taken from device set `devs` (choose.h fill order).
inline std::vector<int> FillCores(const NodeTopology& t, const std::vector<bool>& free_cores,
                                  const std::vector<int>& devs, int count,
                                  const std::vector<int>& must) {
  const int cpd = t.cores_per_device;
  std::vector<int> chosen = must;
  std::vector<std::pair<int, int>> order;
  for (int d : devs) {
    int remaining = 0;
    for (int c = d * cpd; c < (d + 1) * cpd; ++c) {
      if (free_cores[c] && std::find(must.begin(), must.end(), c) == must.end()) ++remaining;
    }
    order.push_back({remaining, d});
  }
  std::sort(order.begin(), order.end());
  for (auto [remaining, d] : order) {
    for (int c = d * cpd; c < (d + 1) * cpd; ++c) {
      if (static_cast<int>(chosen.size()) == count) break;
      if (free_cores[c] && std::find(chosen.begin(), chosen.end(), c) == chosen.end()) {
        chosen.push_back(c);
      }
    }
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

// Best core set per choose.h, by scanning every core-usable device set.
inline std::optional<std::vector<int>> BestCores(const NodeTopology& t,
                                                 const std::vector<std::vector<int>>& core_sets,
                                                 const std::vector<bool>& free_cores, int count,
                                                 const std::vector<int>& must) {
  const int cpd = t.cores_per_device;
  const int total = t.devices * cpd;
  for (int c : must) {
    if (!free_cores[c]) return std::nullopt;
  }
  if (count == total) {
    if (std::count(free_cores.begin(), free_cores.end(), true) != total) return std::nullopt;
    std::vector<int> all(total);
    for (int c = 0; c < total; ++c) all[c] = c;
    return all;
  }
  const int m = (count + cpd - 1) / cpd;
  std::vector<bool> wholly(t.devices);
  std::vector<int> free_on(t.devices, 0);
  for (int d = 0; d < t.devices; ++d) {
    for (int c = d * cpd; c < (d + 1) * cpd; ++c) free_on[d] += free_cores[c] ? 1 : 0;
    wholly[d] = free_on[d] == cpd;
  }
  std::optional<std::vector<int>> best;
  std::vector<int> best_profile;
  int best_leftover = 0;
  for (const auto& devs : core_sets) {
    if (static_cast<int>(devs.size()) != m) continue;
    int sum = 0;
    bool each_used = true;
    for (int d : devs) {
      sum += free_on[d];
      each_used = each_used && free_on[d] > 0;
    }
    if (!each_used || sum < count) continue;
    bool has_must = true;
    for (int c : must) has_must = has_must && std::count(devs.begin(), devs.end(), c / cpd) > 0;
    if (!has_must) continue;
    std::vector<bool> left = wholly;
    for (int d : devs) left[d] = false;
    auto p = Profile(t, left);
    const int leftover = sum - count;
    auto cores = FillCores(t, free_cores, devs, count, must);
    if (!best || p > best_profile ||
        (p == best_profile &&
         (leftover < best_leftover || (leftover == best_leftover && cores < *best)))) {
      best = cores;
      best_profile = p;
      best_leftover = leftover;
    }
  }
  return best;
}

}  // namespace neuron::topology::reference

#endif  // NEURON_TESTS_TOPOLOGY_REFERENCE_H_
