#include "lib/dra/slice_compare.h"

#include <string>
#include <utility>

#include "lib/base/json_access.h"

namespace neuron::dra {
namespace {

using nlohmann::json;

constexpr char kTimeAdded[] = "timeAdded";

// The object holding a device's taints: the device (v1) or its "basic" (v1beta1).
const json* Fields(const json& device) {
  if (!device.is_object()) return nullptr;
  auto basic = device.find("basic");
  if (basic != device.end()) return basic->is_object() ? &*basic : nullptr;
  return &device;
}

const json* Taints(const json& device) {
  const json* f = Fields(device);
  if (f == nullptr) return nullptr;
  auto taints = f->find("taints");
  return taints != f->end() && taints->is_array() ? &*taints : nullptr;
}

json* Taints(json& device) { return const_cast<json*>(Taints(std::as_const(device))); }

const json* Devices(const json& spec) {
  const json* devices = Member(spec, "devices");
  return devices != nullptr && devices->is_array() ? devices : nullptr;
}

bool SameTaint(const json& a, const json& b) {
  for (const char* k : {"key", "value", "effect"}) {
    if (a.value(k, json()) != b.value(k, json())) return false;
  }
  return true;
}

}  // namespace

bool SameSliceSpec(const json& rendered, const json& stored) {
  const json* want = Devices(rendered);
  const json* have = Devices(stored);
  if (want == nullptr || have == nullptr || want->size() != have->size()) {
    return rendered == stored;
  }
  json copy = stored;
  for (size_t i = 0; i < want->size(); ++i) {
    const json* want_taints = Taints((*want)[i]);
    json* have_taints = Taints(copy["devices"][i]);
    if (want_taints == nullptr || have_taints == nullptr ||
        want_taints->size() != have_taints->size()) {
      continue;  // differ or have no taints: plain comparison decides
    }
    for (size_t j = 0; j < want_taints->size(); ++j) {
      const json& w = (*want_taints)[j];
      json& h = (*have_taints)[j];
      if (w.is_object() && h.is_object() && !w.contains(kTimeAdded)) h.erase(kTimeAdded);
    }
  }
  return rendered == copy;
}

void KeepTaintTimes(json& rendered, const json& stored) {
  const json* have = Devices(stored);
  if (have == nullptr || !rendered.is_object() || !rendered.contains("devices") ||
      !rendered["devices"].is_array()) {
    return;
  }
  for (json& device : rendered["devices"]) {
    json* taints = Taints(device);
    if (taints == nullptr) continue;
    const std::string name = device.value("name", "");
    for (const json& old : *have) {
      const json* old_taints =
          old.is_object() && old.value("name", "") == name ? Taints(old) : nullptr;
      if (old_taints == nullptr) continue;
      for (json& t : *taints) {
        if (!t.is_object() || t.contains(kTimeAdded)) continue;
        for (const json& o : *old_taints) {
          const json* added = Member(o, kTimeAdded);
          if (added != nullptr && SameTaint(t, o)) {
            t[kTimeAdded] = *added;
            break;
          }
        }
      }
    }
  }
}

}  // namespace neuron::dra
