// File: tests/fuzz/deviceplugin_ids_fuzz.cc
// Fuzzes the AWS_NEURON_IDS parser and the annotation hint path: never crash, and whatever
// parses formats back to an equivalent list.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "lib/deviceplugin/handshake.h"
#include "lib/deviceplugin/ids.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  using namespace neuron::deviceplugin;  // NOLINT(google-build-using-namespace)
  absl::StatusOr<std::vector<int>> ids = ParseIdList(input);
  if (ids.ok()) {
    if (ids->empty()) std::abort();
    std::set<int> unique(ids->begin(), ids->end());
    if (unique.size() != ids->size()) std::abort();
    for (int id : *ids) {
      if (id < 0 || id > kMaxId) std::abort();
    }
    absl::StatusOr<std::vector<int>> again = ParseIdList(FormatIdList(*ids));
    if (!again.ok() || *again != *ids) std::abort();
    absl::StatusOr<std::vector<int>> ranges = ParseIdList(FormatRanges(*ids));
    if (!ranges.ok() || std::set<int>(ranges->begin(), ranges->end()) != unique) std::abort();
  }
  (void)ParseId(input);
  (void)ParseResourceList(input);
  PodAnnotations pod{"ns",
                     "p",
                     {{kAnnotationIds, input},
                      {kAnnotationType, "neuroncore"},
                      {kAnnotationAllocated, "false"},
                      {kAnnotationAllocTime, input}}};
  (void)PendingChoice({pod}, ResourceKind::kCore, ids.ok() ? static_cast<int>(ids->size()) : 1);
  return 0;
}
