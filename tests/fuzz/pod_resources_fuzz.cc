// File: tests/fuzz/pod_resources_fuzz.cc
// Fuzzes what the device plugin derives from the kubelet's PodResources v1 List reply: the input
// is the reply's protobuf wire bytes. HoldingsFromList must keep only valid, sorted, unique IDs;
// the handshake plan must write AWS_NEURON_IDS the extender parses back to exactly what the pod
// holds, and applying the plan must leave nothing more to do.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "google/protobuf/stubs/logging.h"
#include "lib/assignment/annotations.h"
#include "lib/deviceplugin/handshake.h"
#include "lib/deviceplugin/pod_resources.h"

namespace dp = neuron::deviceplugin;

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

const dp::PodHoldings* Find(const std::vector<dp::PodHoldings>& held, const std::string& ns,
                            const std::string& name) {
  auto it = std::find_if(held.begin(), held.end(),
                         [&](const dp::PodHoldings& h) { return h.ns == ns && h.name == name; });
  return it == held.end() ? nullptr : &*it;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Rejected invalid UTF-8 in string fields is logged per input: too slow and noisy here.
  static const bool kQuiet = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)kQuiet;
  v1::ListPodResourcesResponse reply;
  if (!reply.ParseFromArray(data, static_cast<int>(size))) return 0;
  const std::vector<dp::PodHoldings> held = dp::HoldingsFromList(reply);

  std::vector<dp::PodAnnotations> pods;
  for (const dp::PodHoldings& h : held) {
    Check(!h.ids.empty() && Find(held, h.ns, h.name) == &h);  // one entry per pod
    for (const auto& [kind, ids] : h.ids) {
      Check(!ids.empty() && std::is_sorted(ids.begin(), ids.end()));
      Check(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
      for (int id : ids) Check(id >= 0 && id <= neuron::assignment::kMaxId);
    }
    // The API's view of the pod: the extender's pending choice, naming alternating kinds.
    const bool core = pods.size() % 2 == 0;
    pods.push_back({h.ns,
                    h.name,
                    {{neuron::assignment::kAnnotationType, core ? "neuroncore" : "neuron"},
                     {neuron::assignment::kAnnotationAllocated, "false"},
                     {"other", "kept"}}});
  }

  for (const dp::AnnotationPatch& p : dp::PlanHandshake(held, pods)) {
    const dp::PodHoldings* h = Find(held, p.ns, p.name);
    Check(h != nullptr);
    for (auto& pod : pods) {
      if (pod.ns != p.ns || pod.name != p.name) continue;
      for (const auto& [k, v] : p.set) pod.annotations[k] = v;
      Check(pod.annotations.at("other") == "kept");
      // Whatever the plan left as it was, the pod now reads as holding exactly its IDs.
      const std::optional<neuron::assignment::ResourceKind> kind =
          neuron::assignment::ParseResourceKind(
              pod.annotations.at(neuron::assignment::kAnnotationType));
      Check(kind.has_value() && h->ids.count(*kind) == 1);
      absl::StatusOr<std::vector<int>> parsed =
          neuron::assignment::ParseIdList(pod.annotations.at(neuron::assignment::kAnnotationIds));
      Check(parsed.ok() && *parsed == h->ids.at(*kind));
      Check(pod.annotations.at(neuron::assignment::kAnnotationAllocated) == "true");
    }
  }
  Check(dp::PlanHandshake(held, pods).empty());  // applied: nothing left to do
  return 0;
}
