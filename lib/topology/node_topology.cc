#include "lib/topology/node_topology.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace neuron::topology {
namespace {

using Adjacency = std::vector<std::vector<int>>;

// Sorted, de-duplicated, symmetric neighbour lists without self links or out-of-range ids.
Adjacency Symmetric(const Adjacency& links) {
  const int n = static_cast<int>(links.size());
  Adjacency adj(n);
  for (int d = 0; d < n; ++d) {
    for (int o : links[d]) {
      if (o < 0 || o >= n || o == d) continue;
      adj[d].push_back(o);
      adj[o].push_back(d);
    }
  }
  for (auto& a : adj) {
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
  }
  return adj;
}

bool IsConnected(const Adjacency& adj) {
  const int n = static_cast<int>(adj.size());
  if (n == 0) return false;
  std::vector<bool> seen(n, false);
  std::vector<int> stack = {0};
  seen[0] = true;
  int count = 1;
  while (!stack.empty()) {
    const int d = stack.back();
    stack.pop_back();
    for (int o : adj[d]) {
      if (!seen[o]) {
        seen[o] = true;
        ++count;
        stack.push_back(o);
      }
    }
  }
  return count == n;
}

bool IsCanonicalTorus(const Adjacency& adj) {
  const int n = static_cast<int>(adj.size());
  int w = 0;
  while ((w + 1) * (w + 1) <= n) ++w;
  if (w < 3 || w * w != n) return false;
  for (int d = 0; d < n; ++d) {
    const int row = d / w * w;
    std::vector<int> want = {row + (d - row + 1) % w, row + (d - row + w - 1) % w, (d + w) % n,
                             (d + n - w) % n};
    std::sort(want.begin(), want.end());
    want.erase(std::unique(want.begin(), want.end()), want.end());
    if (adj[d] != want) return false;
  }
  return true;
}

LinkKind Classify(const Adjacency& adj) {
  const int n = static_cast<int>(adj.size());
  size_t edges2 = 0;  // twice the edge count
  int deg1 = 0, deg2 = 0;
  for (const auto& a : adj) {
    edges2 += a.size();
    if (a.size() == 1) ++deg1;
    if (a.size() == 2) ++deg2;
  }
  if (edges2 == 0) return LinkKind::kNone;
  const bool connected = IsConnected(adj);
  if (connected && n >= 3 && deg2 == n) return LinkKind::kRing;
  if (connected && n >= 2 && deg1 == 2 && deg1 + deg2 == n) return LinkKind::kChain;
  if (IsCanonicalTorus(adj)) return LinkKind::kTorus2D;
  if (edges2 == static_cast<size_t>(n) * static_cast<size_t>(n - 1)) return LinkKind::kAllToAll;
  return LinkKind::kChain;  // irregular: the "connected in the link graph" rule applies
}

}  // namespace

absl::StatusOr<NodeTopology> TopologyForShape(const Shape& shape, int lnc) {
  const std::optional<DeviceModel> model = ModelForPciDevice(shape.pci_device_id);
  if (!model.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shape ", shape.instance_type, ": unknown pci device id ", absl::Hex(shape.pci_device_id)));
  }
  if (lnc == 0) lnc = model->default_lnc;
  const bool ok = lnc == 1 || (lnc == 2 && model->lnc_capable);
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat("LNC ", lnc, " is not supported by family ", FamilyName(model->family)));
  }
  if (shape.devices < 1 || static_cast<int>(shape.links.size()) != shape.devices) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape ", shape.instance_type, ": links do not match the device count"));
  }
  return NodeTopology{model->family, shape.link_kind, shape.devices, model->physical_cores / lnc,
                      shape.links};
}

NodeTopology TopologyFromLinks(Family family, int cores_per_device,
                               const std::vector<std::vector<int>>& links) {
  Adjacency adj = Symmetric(links);
  const LinkKind kind = Classify(adj);
  const int n = static_cast<int>(adj.size());
  return NodeTopology{family, kind, n, cores_per_device, std::move(adj)};
}

}  // namespace neuron::topology
