// File: tests/fuzz/assignment_fuzz.cc
// Fuzzes the pod/device protocol's readers (lib/assignment): the AWS_NEURON_IDS codec and the
// handshake annotations any client can write. Never crash; whatever parses formats back to an
// equivalent value.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "lib/assignment/annotations.h"
#include "lib/assignment/ids.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace a = neuron::assignment;
  const std::string input(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::vector<int>> ids = a::ParseIdList(input);
  if (ids.ok()) {
    if (ids->empty()) std::abort();
    std::set<int> unique(ids->begin(), ids->end());
    if (unique.size() != ids->size()) std::abort();
    for (int id : *ids) {
      if (id < 0 || id > a::kMaxId) std::abort();
    }
    absl::StatusOr<std::vector<int>> again = a::ParseIdList(a::FormatIdList(*ids));
    if (!again.ok() || *again != *ids) std::abort();
    absl::StatusOr<std::vector<int>> ranges = a::ParseIdList(a::FormatRanges(*ids));
    if (!ranges.ok() || std::set<int>(ranges->begin(), ranges->end()) != unique) std::abort();
  }
  (void)a::ParseId(input);
  (void)a::ParseResourceList(input);
  // The same bytes in every key: whatever parses must survive a Format/Parse round trip.
  const a::Annotations written = {{a::kAnnotationIds, input},
                                  {a::kAnnotationType, input.size() % 2 ? "neuron" : input},
                                  {a::kAnnotationAllocated, input.size() % 3 ? "false" : input},
                                  {a::kAnnotationAllocTime, input}};
  absl::StatusOr<a::Assignment> parsed = a::Parse(written);
  if (parsed.ok()) {
    absl::StatusOr<a::Assignment> again = a::Parse(a::Format(*parsed));
    if (!again.ok() || !(*again == *parsed)) std::abort();
  }
  return 0;
}
