// File: tests/fuzz/deviceplugin_pod_fuzz.cc
// Fuzzes what the pod cache does to objects from the API server (PodCacheFields, PodAnnotationsOf):
// never throw or crash on any input; a pod pruned to the cache's fields says the same about
// its identity and the handshake's keys (an UltraServer placement too) as the whole pod, and
// pruning again changes nothing; a placement read from any annotations never crashes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "lib/assignment/annotations.h"
#include "lib/base/json_prune.h"
#include "lib/deviceplugin/pod_cache.h"
#include "lib/deviceplugin/ultraserver_env.h"
#include "nlohmann/json.hpp"

namespace {

using neuron::deviceplugin::PodAnnotations;

bool SameHandshake(const PodAnnotations& whole, const PodAnnotations& pruned) {
  if (whole.ns != pruned.ns || whole.name != pruned.name) return false;
  namespace dp = neuron::deviceplugin;
  for (const char* key :
       {neuron::assignment::kAnnotationIds, neuron::assignment::kAnnotationType,
        neuron::assignment::kAnnotationAllocated, neuron::assignment::kAnnotationAllocTime,
        dp::kUsSetSizeAnnotation, dp::kUsServerIdAnnotation, dp::kUsNodeIdAnnotation,
        dp::kUsModeAnnotation, dp::kUsRankAnnotation, dp::kUsRank0HostAnnotation}) {
    auto w = whole.annotations.find(key);
    auto p = pruned.annotations.find(key);
    if ((w == whole.annotations.end()) != (p == pruned.annotations.end())) return false;
    if (w != whole.annotations.end() && w->second != p->second) return false;
  }
  return pruned.annotations.size() <= 10;
}

// A group pod's placement read against a fixed identity: any annotations, never a crash, and
// an environment only with all five variables.
void CheckUltraServerEnv(const PodAnnotations& pod) {
  neuron::ultraserver::Identity id;
  id.modes = {1, 2, 4};
  id.server_id_4 = "bog79p1y8tetj5uu";
  id.node_id_4 = 2;
  id.server_id_2 = "ygml2651y0lwdd46";
  id.node_id_2 = 0;
  if (!neuron::deviceplugin::HasPlacement(pod.annotations)) return;
  auto env = neuron::deviceplugin::UltraServerEnv(pod.annotations, std::optional(id));
  if (env.ok() && env->size() != 5) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using neuron::ParsePruned;
  using neuron::deviceplugin::PodAnnotationsOf;
  using neuron::deviceplugin::PodCacheFields;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto pruned = ParsePruned(input, PodCacheFields());
  if (!pruned.ok()) return 0;  // refused with a status: fine
  const nlohmann::json whole = nlohmann::json::parse(input, nullptr, false);
  if (!whole.is_discarded() && !SameHandshake(PodAnnotationsOf(whole), PodAnnotationsOf(*pruned))) {
    std::abort();
  }
  CheckUltraServerEnv(PodAnnotationsOf(*pruned));
  std::string text;
  try {
    text = pruned->dump();
  } catch (const nlohmann::json::type_error&) {
    return 0;  // invalid UTF-8 the scanner passed through: not re-encodable, not our concern here
  }
  auto again = ParsePruned(text, PodCacheFields());
  if (!again.ok() || *again != *pruned) std::abort();
  return 0;
}
