#include "lib/dra/device_groups.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/sha256.h"
#include "lib/topology/valid_sets.h"

namespace neuron::dra {
namespace {

constexpr size_t kIdHexDigits = 16;

std::vector<int> Block(int size, int index) {
  std::vector<int> members(size);
  for (int i = 0; i < size; ++i) members[i] = index * size + i;
  return members;
}

std::string NodeDerivedId(absl::string_view node_name, int size, int index) {
  return Sha256Hex(absl::StrCat(node_name, "/", size, "/", index)).substr(0, kIdHexDigits);
}

// The ID AWS's EFA driver gives this block, or "" when a member has no paired EFA interface.
std::string EfaDerivedId(const DeviceGroup& g, const std::map<int, std::string>& efa_bdfs) {
  std::set<std::string> bdfs;  // sorted, distinct
  for (int d : g.members) {
    auto it = efa_bdfs.find(d);
    if (it == efa_bdfs.end() || it->second.empty()) return "";
    bdfs.insert(it->second);
  }
  if (g.size == 1) return *bdfs.begin();
  return Sha256Hex(absl::StrJoin(bdfs, ",")).substr(0, kIdHexDigits);
}

// EFA-derived IDs for the groups of one size when every group has one and they are distinct;
// node-derived IDs otherwise (a shared ID would join groups the model keeps apart).
void AssignIds(std::vector<DeviceGroup>& same_size, absl::string_view node_name,
               const std::map<int, std::string>& efa_bdfs) {
  std::set<std::string> seen;
  bool usable = !efa_bdfs.empty();
  for (DeviceGroup& g : same_size) {
    g.id = usable ? EfaDerivedId(g, efa_bdfs) : "";
    usable = usable && !g.id.empty() && seen.insert(g.id).second;
  }
  if (usable) return;
  for (DeviceGroup& g : same_size) g.id = NodeDerivedId(node_name, g.size, g.index);
}

}  // namespace

DeviceGroups::DeviceGroups(const topology::NodeTopology& t, absl::string_view node_name,
                           const std::map<int, std::string>& efa_bdfs) {
  for (int size : kGroupSizes) {
    std::vector<DeviceGroup> same_size;
    for (int b = 0; (b + 1) * size <= t.devices; ++b) {
      std::vector<int> members = Block(size, b);
      if (topology::IsValidDeviceSet(t, members)) {
        same_size.push_back({size, b, std::move(members), ""});
      }
    }
    AssignIds(same_size, node_name, efa_bdfs);
    groups_.insert(groups_.end(), same_size.begin(), same_size.end());
  }
}

const DeviceGroup* DeviceGroups::Find(int size, int device) const {
  for (const DeviceGroup& g : groups_) {
    if (g.size == size && std::binary_search(g.members.begin(), g.members.end(), device)) {
      return &g;
    }
  }
  return nullptr;
}

GridPosition PositionOf(const topology::NodeTopology& t, int device) {
  if (t.link_kind != topology::LinkKind::kTorus2D) return {device, 0};
  int w = 1;
  while ((w + 1) * (w + 1) <= t.devices) ++w;
  return {device % w, device / w};
}

}  // namespace neuron::dra
