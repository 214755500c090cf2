// File: tests/fuzz/deviceplugin_pod_fuzz.cc
// Fuzzes what the pod cache does to objects from the API server (TrimPod, PodAnnotationsOf):
// never throw or crash on any JSON, trimming is idempotent and keeps the annotations.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "lib/deviceplugin/pod_cache.h"
#include "nlohmann/json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using neuron::deviceplugin::PodAnnotationsOf;
  using neuron::deviceplugin::TrimPod;
  const std::string input(reinterpret_cast<const char*>(data), size);
  nlohmann::json pod = nlohmann::json::parse(input, nullptr, false);
  if (pod.is_discarded()) return 0;
  const neuron::deviceplugin::PodAnnotations before = PodAnnotationsOf(pod);
  TrimPod(pod);
  const neuron::deviceplugin::PodAnnotations after = PodAnnotationsOf(pod);
  if (after.ns != before.ns || after.name != before.name ||
      after.annotations != before.annotations) {
    std::abort();
  }
  nlohmann::json again = pod;
  TrimPod(again);
  if (again != pod) std::abort();
  return 0;
}
