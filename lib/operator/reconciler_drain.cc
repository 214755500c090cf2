// File: lib/operator/reconciler_drain.cc
// The API side of draining a node before its driver moves (device_config_drain.h, upgrade.h):
// listing what is left on it, and evicting through policy/v1 pods/eviction.
#include "absl/strings/str_cat.h"
#include "lib/base/json_access.h"
#include "lib/k8s/object_view.h"
#include "lib/operator/reconciler.h"
#include "spdlog/spdlog.h"

namespace neuron::op {

using nlohmann::json;

absl::StatusOr<NodePods> Reconciler::DrainPods(const DeviceConfig& dc,
                                               const std::vector<json>& nodes) {
  const std::string drain_label = DrainLabel(dc);
  const std::string version_label = VersionLabel(dc);
  NodePods out;
  for (const json& n : nodes) {
    const k8s::ObjectView node(n);
    // Cordoned for this version and not labelled for it yet: still draining.
    if (node.label(drain_label) != dc.spec.driver_version ||
        node.label(version_label) == dc.spec.driver_version) {
      continue;
    }
    const std::string name(node.name());
    k8s::ListOptions opts;
    opts.field_selector = absl::StrCat("spec.nodeName=", name);
    absl::StatusOr<k8s::ListResult> pods = client_.ListAll(k8s::resources::kPods, "", opts);
    if (!pods.ok()) {
      spdlog::warn("drain: listing pods failed deviceconfig={} node={} error=\"{}\"",
                   DeviceConfigKey(dc), name, std::string(pods.status().message()));
      return pods.status();
    }
    std::vector<DrainPod>& left = out[name];
    for (const json& p : pods->items) {
      if (!DrainsPod(p, dc.spec.upgrade.drain)) continue;
      const k8s::ObjectView pod(p);
      left.push_back({std::string(pod.namespace_()), std::string(pod.name()),
                      EvictionBlocker(p, dc.spec.upgrade.drain), pod.deleting()});
    }
  }
  return out;
}

void Reconciler::RunDrains(const DeviceConfig& dc, const json& obj, UpgradePlan& plan) {
  for (const DrainOrder& order : plan.drains) {
    for (const DrainPod& p : order.evict) {
      const absl::Status s = client_.Evict(p.ns, p.name);
      if (s.ok() || absl::IsNotFound(s)) {
        ++plan.evicted;
        spdlog::info("drain: evicted deviceconfig={} node={} pod={}/{}", DeviceConfigKey(dc),
                     order.node, p.ns, p.name);
      } else if (absl::IsResourceExhausted(s)) {
        // The pod's PodDisruptionBudget allows no disruption now: ask again next pass.
        ++plan.eviction_refused;
        const std::string why = absl::StrCat("node ", order.node, " waits on pod ", p.ns, "/",
                                             p.name, ": ", s.message());
        spdlog::info("drain: eviction refused deviceconfig={} {}", DeviceConfigKey(dc), why);
        Emit(obj, k8s::kEventNormal, "DrainWaiting", why);
      } else {
        spdlog::warn("drain: eviction failed deviceconfig={} node={} pod={}/{} error=\"{}\"",
                     DeviceConfigKey(dc), order.node, p.ns, p.name, std::string(s.message()));
      }
    }
    for (const DrainPod& p : order.remove) {
      const absl::StatusOr<json> r = client_.Delete(k8s::resources::kPods, p.ns, p.name);
      if (r.ok() || absl::IsNotFound(r.status())) {
        ++plan.deleted;
        spdlog::warn(
            "drain: deleted after the drain timeout (force) deviceconfig={} node={} "
            "pod={}/{}",
            DeviceConfigKey(dc), order.node, p.ns, p.name);
      } else {
        spdlog::warn("drain: delete failed deviceconfig={} node={} pod={}/{} error=\"{}\"",
                     DeviceConfigKey(dc), order.node, p.ns, p.name,
                     std::string(r.status().message()));
      }
    }
  }
}

}  // namespace neuron::op
